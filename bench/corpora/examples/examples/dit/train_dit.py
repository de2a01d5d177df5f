"""Train a class-conditional diffusion transformer (DiT) on ImageNet-style latents.

The transformer's blocks are compiled in place (regional compilation) and the forward runs under the
library's ``autocast_for``; the backward runs after it (CAL002 with the default
``backward_pass_autocast``).
"""

import argparse
import logging
import math
import os

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from torchvision import datasets, transforms
from tqdm.auto import tqdm

from difflab import AutoencoderKL, DDPMScheduler, DiTPipeline, DiTTransformer2DModel
from difflab.optimization import get_scheduler
from difflab.training_utils import EMAModel, autocast_for, min_snr_loss_weights, set_seed, unwrap_model

logger = logging.getLogger(__name__)

#: The model family this copy of the example trains (the examples folder holds one script per family).
VARIANT = "base"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=f"Train a {VARIANT} DiT.")
    parser.add_argument("--data_dir", type=str, required=True)
    parser.add_argument("--vae_name_or_path", type=str, default="difflab/sd-vae-ft-ema")
    parser.add_argument("--output_dir", type=str, default=f"dit-{VARIANT}")
    parser.add_argument("--num_classes", type=int, default=1000)
    parser.add_argument("--image_size", type=int, default=256)
    parser.add_argument("--patch_size", type=int, default=2)
    parser.add_argument("--depth", type=int, default=28)
    parser.add_argument("--num_heads", type=int, default=16)
    parser.add_argument("--head_dim", type=int, default=72)
    parser.add_argument("--class_dropout_prob", type=float, default=0.1)
    parser.add_argument("--train_batch_size", type=int, default=32)
    parser.add_argument("--num_epochs", type=int, default=80)
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--lr_scheduler", type=str, default="constant")
    parser.add_argument("--lr_warmup_steps", type=int, default=0)
    parser.add_argument("--snr_gamma", type=float, default=None)
    parser.add_argument("--ema_decay", type=float, default=0.9999)
    parser.add_argument("--mixed_precision", type=str, default="bf16", choices=["no", "fp16", "bf16"])
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--max_grad_norm", type=float, default=1.0)
    parser.add_argument("--checkpointing_steps", type=int, default=5000)
    parser.add_argument("--sample_every", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--num_workers", type=int, default=8)
    return parser.parse_args(argv)


def center_crop_arr(image, image_size):
    """ADM's center crop: downsample by powers of two, then resize and crop to ``image_size``."""
    while min(*image.size) >= 2 * image_size:
        image = image.resize(tuple(x // 2 for x in image.size))
    scale = image_size / min(*image.size)
    image = image.resize(tuple(round(x * scale) for x in image.size))
    left = (image.size[0] - image_size) // 2
    top = (image.size[1] - image_size) // 2
    return image.crop((left, top, left + image_size, top + image_size))


def build_dataloader(args):
    transform = transforms.Compose(
        [
            transforms.Lambda(lambda image: center_crop_arr(image, args.image_size)),
            transforms.RandomHorizontalFlip(),
            transforms.ToTensor(),
            transforms.Normalize(mean=[0.5, 0.5, 0.5], std=[0.5, 0.5, 0.5]),
        ]
    )
    dataset = datasets.ImageFolder(args.data_dir, transform=transform)
    return torch.utils.data.DataLoader(
        dataset, batch_size=args.train_batch_size, shuffle=True, num_workers=args.num_workers, drop_last=True
    )


def sample_images(transformer, vae, scheduler, accelerator, step, args):
    pipeline = DiTPipeline(transformer=unwrap_model(transformer), vae=vae, scheduler=scheduler)
    pipeline.set_progress_bar_config(disable=True)
    generator = torch.Generator(device=accelerator.device).manual_seed(args.seed)
    images = pipeline(class_labels=[207, 360, 387, 974], generator=generator, num_inference_steps=50).images
    logger.info("step %d: sampled %d images", step, len(images))
    return images


def main(args):
    accelerator = Accelerator()
    set_seed(args.seed + accelerator.process_index)
    os.makedirs(args.output_dir, exist_ok=True)
    vae = AutoencoderKL.from_pretrained(args.vae_name_or_path)
    vae.requires_grad_(False)
    transformer = DiTTransformer2DModel(
        num_attention_heads=args.num_heads,
        attention_head_dim=args.head_dim,
        num_layers=args.depth,
        sample_size=args.image_size // 8,
        patch_size=args.patch_size,
        num_embeds_ada_norm=args.num_classes,
    )
    # Regional compilation: every block compiled in place, the repeated graph compiles once.
    for block in transformer.transformer_blocks:
        block.compile(fullgraph=True)
    ema = EMAModel(
        transformer.parameters(), decay=args.ema_decay, model_cls=DiTTransformer2DModel, model_config=transformer.config
    )
    noise_scheduler = DDPMScheduler(num_train_timesteps=1000, beta_schedule="linear", clip_sample=False)
    optimizer = torch.optim.AdamW(transformer.parameters(), lr=args.learning_rate, weight_decay=0)
    dataloader = build_dataloader(args)
    max_steps = args.num_epochs * len(dataloader)
    lr_scheduler = get_scheduler(
        args.lr_scheduler, optimizer, num_warmup_steps=args.lr_warmup_steps, num_training_steps=max_steps
    )
    transformer, optimizer, dataloader = accelerator.prepare(transformer, optimizer, dataloader)
    vae.to(accelerator.device)
    ema.to(accelerator.device)

    step = 0
    progress = tqdm(total=max_steps, disable=not accelerator.is_local_main_process)
    for epoch in range(args.num_epochs):
        for images, labels in dataloader:
            with torch.no_grad():
                latents = vae.encode(images).latent_dist.sample() * vae.config.scaling_factor
            noise = torch.randn_like(latents)
            timesteps = torch.randint(
                0, noise_scheduler.config.num_train_timesteps, (latents.shape[0],), device=latents.device
            )
            noisy = noise_scheduler.add_noise(latents, noise, timesteps)
            with autocast_for(args.mixed_precision, accelerator.device.type):
                model_output = transformer(noisy, timestep=timesteps, class_labels=labels).sample
                eps = model_output[:, : latents.shape[1]]
            if args.snr_gamma is None:
                loss = F.mse_loss(eps.float(), noise.float())
            else:
                weights = min_snr_loss_weights(noise_scheduler, timesteps, args.snr_gamma)
                loss = (F.mse_loss(eps.float(), noise.float(), reduction="none").mean(dim=(1, 2, 3)) * weights).mean()
            optimizer.zero_grad()
            loss.backward()  # expect: CAL002
            grad_norm = torch.nn.utils.clip_grad_norm_(transformer.parameters(), args.max_grad_norm)
            optimizer.step()
            lr_scheduler.step()
            ema.step(transformer.parameters())
            step += 1
            progress.update(1)
            if step % 100 == 0:
                logger.info("epoch %d step %d loss %.4f grad norm %.3f", epoch, step, loss.item(), grad_norm)
            if accelerator.is_main_process and step % args.checkpointing_steps == 0:
                accelerator.save_state(os.path.join(args.output_dir, f"checkpoint-{step}"))
            if accelerator.is_main_process and step % args.sample_every == 0:
                sample_images(transformer, vae, noise_scheduler, accelerator, step, args)
    if accelerator.is_main_process:
        ema.save_pretrained(os.path.join(args.output_dir, "transformer_ema"))
        unwrap_model(transformer).save_pretrained(os.path.join(args.output_dir, "transformer"))
        logger.info("trained %d steps (%.1f epochs)", step, step / max(1, math.ceil(len(dataloader))))


if __name__ == "__main__":
    main(parse_args())
