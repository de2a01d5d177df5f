"""Train the mixture classifier on a folder of CSV files.

    python train.py --data-dir data --epochs 5 --amp bf16 --head-warmup-steps 2
"""

import argparse

import torch

from trainer.data import load_split
from trainer.loop import evaluate, train_epoch, warm_up_head
from trainer.models import MixtureClassifier
from trainer.probe import logit_sensitivity


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--amp", choices=["bf16", "off"], default="bf16")
    parser.add_argument("--aux-weight", type=float, default=0.3)
    parser.add_argument("--head-warmup-steps", type=int, default=0)
    parser.add_argument("--jvp-check", action="store_true", help="report the logits' directional derivative at the end")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    generator = torch.Generator().manual_seed(args.seed)
    features, labels = load_split(args.data_dir, "train")
    val_features, val_labels = load_split(args.data_dir, "val")
    model = MixtureClassifier(features.shape[1], args.hidden, int(labels.max()) + 1)
    model = torch.compile(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    amp_dtype = torch.bfloat16 if args.amp == "bf16" else None
    if args.head_warmup_steps:
        warm_up_head(model, features, labels, optimizer, args.head_warmup_steps, args.batch_size, amp_dtype, generator)
    for epoch in range(args.epochs):
        loss = train_epoch(model, features, labels, optimizer, args.batch_size, amp_dtype, args.aux_weight, generator)
        print(f"epoch {epoch}: loss {loss:.4f}, val accuracy {evaluate(model, val_features, val_labels):.3f}")
    if args.jvp_check:
        print("sensitivity", logit_sensitivity(model, val_features).norm().item())


if __name__ == "__main__":
    main()
