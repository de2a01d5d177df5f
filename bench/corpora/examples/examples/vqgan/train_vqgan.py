"""Train a VQ-GAN generator with a patch discriminator (hinge loss), eagerly and in float32."""

import argparse
import logging
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator
from datasets import load_dataset
from torchvision import transforms
from tqdm.auto import tqdm

from difflab import VQModel
from difflab.optimization import get_scheduler
from difflab.training_utils import EMAModel, set_seed, unwrap_model

logger = logging.getLogger(__name__)

#: The model family this copy of the example trains (the examples folder holds one script per family).
VARIANT = "base"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=f"VQ-GAN training ({VARIANT}).")
    parser.add_argument("--dataset_name", type=str, required=True)
    parser.add_argument("--output_dir", type=str, default=f"vqgan-{VARIANT}")
    parser.add_argument("--resolution", type=int, default=256)
    parser.add_argument("--train_batch_size", type=int, default=8)
    parser.add_argument("--max_train_steps", type=int, default=100000)
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--discr_learning_rate", type=float, default=1e-4)
    parser.add_argument("--lr_scheduler", type=str, default="constant")
    parser.add_argument("--discriminator_start", type=int, default=10000)
    parser.add_argument("--disc_weight", type=float, default=0.8)
    parser.add_argument("--commit_weight", type=float, default=0.25)
    parser.add_argument("--use_ema", action="store_true")
    parser.add_argument("--seed", type=int, default=None)
    return parser.parse_args(argv)


class PatchDiscriminator(nn.Module):
    def __init__(self, in_channels=3, channels=64, n_layers=3):
        super().__init__()
        layers = [nn.Conv2d(in_channels, channels, 4, 2, 1), nn.LeakyReLU(0.2, True)]
        mult = 1
        for n in range(1, n_layers + 1):
            prev, mult = mult, min(2**n, 8)
            stride = 2 if n < n_layers else 1
            layers += [
                nn.Conv2d(channels * prev, channels * mult, 4, stride, 1, bias=False),
                nn.BatchNorm2d(channels * mult),
                nn.LeakyReLU(0.2, True),
            ]
        layers.append(nn.Conv2d(channels * mult, 1, 4, 1, 1))
        self.main = nn.Sequential(*layers)

    def forward(self, x):
        return self.main(x)


def hinge_d_loss(logits_real, logits_fake):
    return 0.5 * (torch.mean(F.relu(1.0 - logits_real)) + torch.mean(F.relu(1.0 + logits_fake)))


def main(args):
    accelerator = Accelerator()
    if args.seed is not None:
        set_seed(args.seed)
    model = VQModel(
        block_out_channels=(128, 256, 256, 512), layers_per_block=2, latent_channels=256, num_vq_embeddings=16384
    )
    discriminator = PatchDiscriminator()
    ema_model = EMAModel(model.parameters(), model_cls=VQModel, model_config=model.config) if args.use_ema else None
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, betas=(0.5, 0.9))
    discr_optimizer = torch.optim.AdamW(discriminator.parameters(), lr=args.discr_learning_rate, betas=(0.5, 0.9))
    dataset = load_dataset(args.dataset_name, split="train")
    image_transforms = transforms.Compose(
        [
            transforms.Resize(args.resolution),
            transforms.RandomCrop(args.resolution),
            transforms.ToTensor(),
            transforms.Normalize([0.5], [0.5]),
        ]
    )
    dataset.set_transform(lambda ex: {"pixel_values": [image_transforms(i.convert("RGB")) for i in ex["image"]]})
    dataloader = torch.utils.data.DataLoader(dataset, batch_size=args.train_batch_size, shuffle=True)
    lr_scheduler = get_scheduler(
        args.lr_scheduler, optimizer, num_warmup_steps=0, num_training_steps=args.max_train_steps
    )
    model, discriminator, optimizer, discr_optimizer, dataloader = accelerator.prepare(
        model, discriminator, optimizer, discr_optimizer, dataloader
    )

    step = 0
    progress_bar = tqdm(range(args.max_train_steps), disable=not accelerator.is_local_main_process)
    while step < args.max_train_steps:
        for batch in dataloader:
            pixel_values = batch["pixel_values"]
            reconstruction, commit_loss = model(pixel_values, return_dict=False)
            rec_loss = F.l1_loss(reconstruction, pixel_values)
            gen_loss = rec_loss + args.commit_weight * commit_loss
            if step >= args.discriminator_start:
                gen_loss = gen_loss - args.disc_weight * discriminator(reconstruction).mean()
            optimizer.zero_grad()
            accelerator.backward(gen_loss)  # ok: eager
            optimizer.step()
            lr_scheduler.step()
            if step >= args.discriminator_start:
                logits_real = discriminator(pixel_values.detach())
                logits_fake = discriminator(reconstruction.detach())
                discr_loss = hinge_d_loss(logits_real, logits_fake)
                discr_optimizer.zero_grad()
                accelerator.backward(discr_loss)  # ok: eager
                discr_optimizer.step()
            if ema_model is not None:
                ema_model.step(model.parameters())
            step += 1
            progress_bar.update(1)
            if step >= args.max_train_steps:
                break
    if accelerator.is_main_process:
        os.makedirs(args.output_dir, exist_ok=True)
        unwrap_model(model).save_pretrained(os.path.join(args.output_dir, "vqmodel"))
    accelerator.end_training()


if __name__ == "__main__":
    main(parse_args())
