"""Train the classifier with accelerate (reduced from the shape of accelerate's examples/cv_example.py).

    accelerate launch --cpu --num_processes 1 --mixed_precision bf16 train.py --data-dir data
"""

import argparse
import csv
import os

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

from model import SmallConvNet


def load(data_dir):
    with open(os.path.join(data_dir, "images.bin"), "rb") as handle:
        pixels = torch.frombuffer(bytearray(handle.read()), dtype=torch.uint8)
    with open(os.path.join(data_dir, "labels.csv"), newline="") as handle:
        labels = torch.tensor([int(row["label"]) for row in csv.DictReader(handle)])
    images = pixels.view(len(labels), 1, 8, 8).float() / 255.0
    return TensorDataset(images, labels)


def gradient_penalty(model, images):
    """Penalize the input gradient's norm (a Lipschitz regularizer)."""
    images = images.detach().requires_grad_(True)
    scores = model(images).logsumexp(-1).sum()
    (grad,) = torch.autograd.grad(scores, images, create_graph=True)  # expect: CAL002, CAL004
    return grad.pow(2).flatten(1).sum(1).mean()


def training_function(args):
    accelerator = Accelerator(cpu=args.cpu, mixed_precision=args.mixed_precision)
    torch.manual_seed(args.seed)
    dataset = load(args.data_dir)
    train_dataloader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True)
    model = SmallConvNet().to(accelerator.device)
    model = torch.compile(model)
    optimizer = torch.optim.AdamW(params=model.parameters(), lr=args.lr)
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    for epoch in range(args.num_epochs):
        model.train()
        for images, labels in train_dataloader:
            outputs = model(images)
            loss = F.cross_entropy(outputs, labels)
            if args.gradient_penalty:
                loss = loss + args.gradient_penalty * gradient_penalty(model, images)
            accelerator.backward(loss)  # expect: CAL002
            optimizer.step()
            optimizer.zero_grad()
        accelerator.print(f"epoch {epoch}: loss {loss.item():.4f}")


def main():
    parser = argparse.ArgumentParser(description="Simple example of a training script.")
    parser.add_argument("--data-dir", default="data")
    parser.add_argument("--mixed_precision", default=None, choices=["no", "fp16", "bf16"])
    parser.add_argument("--cpu", action="store_true", help="If passed, will train on the CPU.")
    parser.add_argument("--num-epochs", dest="num_epochs", type=int, default=10)
    parser.add_argument("--batch-size", dest="batch_size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--gradient-penalty", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=42)
    training_function(parser.parse_args())


if __name__ == "__main__":
    main()
