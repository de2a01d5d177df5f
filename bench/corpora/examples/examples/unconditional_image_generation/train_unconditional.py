"""Train an unconditional pixel-space UNet (DDPM) in float32, compiled.

No autocast anywhere: the compiled backward and eager agree on the autocast state (off), so nothing is
reported here although the model is compiled.
"""

import argparse
import logging
import math
import os

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from datasets import load_dataset
from torchvision import transforms
from tqdm.auto import tqdm

from difflab import DDPMPipeline, DDPMScheduler, UNet2DModel
from difflab.optimization import get_scheduler
from difflab.training_utils import EMAModel, compile_for_training, set_seed, unwrap_model

logger = logging.getLogger(__name__)

#: The model family this copy of the example trains (the examples folder holds one script per family).
VARIANT = "base"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=f"Train the {VARIANT} unconditional DDPM.")
    parser.add_argument("--dataset_name", type=str, default=None)
    parser.add_argument("--train_data_dir", type=str, default=None)
    parser.add_argument("--output_dir", type=str, default=f"ddpm-{VARIANT}")
    parser.add_argument("--resolution", type=int, default=64)
    parser.add_argument("--center_crop", action="store_true")
    parser.add_argument("--random_flip", action="store_true")
    parser.add_argument("--train_batch_size", type=int, default=16)
    parser.add_argument("--eval_batch_size", type=int, default=16)
    parser.add_argument("--num_epochs", type=int, default=100)
    parser.add_argument("--save_images_epochs", type=int, default=10)
    parser.add_argument("--save_model_epochs", type=int, default=10)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--lr_scheduler", type=str, default="cosine")
    parser.add_argument("--lr_warmup_steps", type=int, default=500)
    parser.add_argument("--adam_beta1", type=float, default=0.95)
    parser.add_argument("--adam_beta2", type=float, default=0.999)
    parser.add_argument("--adam_weight_decay", type=float, default=1e-6)
    parser.add_argument("--adam_epsilon", type=float, default=1e-08)
    parser.add_argument("--use_ema", action="store_true")
    parser.add_argument("--ema_inv_gamma", type=float, default=1.0)
    parser.add_argument("--ema_power", type=float, default=3 / 4)
    parser.add_argument("--ema_max_decay", type=float, default=0.9999)
    parser.add_argument("--prediction_type", type=str, default="epsilon", choices=["epsilon", "sample"])
    parser.add_argument("--ddpm_num_steps", type=int, default=1000)
    parser.add_argument("--ddpm_num_inference_steps", type=int, default=1000)
    parser.add_argument("--ddpm_beta_schedule", type=str, default="linear")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args(argv)
    if args.dataset_name is None and args.train_data_dir is None:
        raise ValueError("You must specify either a dataset name or a training folder.")
    return args


def build_dataloader(args):
    augmentations = transforms.Compose(
        [
            transforms.Resize(args.resolution, interpolation=transforms.InterpolationMode.BILINEAR),
            transforms.CenterCrop(args.resolution) if args.center_crop else transforms.RandomCrop(args.resolution),
            transforms.RandomHorizontalFlip() if args.random_flip else transforms.Lambda(lambda x: x),
            transforms.ToTensor(),
            transforms.Normalize([0.5], [0.5]),
        ]
    )
    if args.dataset_name is not None:
        dataset = load_dataset(args.dataset_name, split="train")
    else:
        dataset = load_dataset("imagefolder", data_dir=args.train_data_dir, split="train")

    def transform_images(examples):
        return {"input": [augmentations(image.convert("RGB")) for image in examples["image"]]}

    dataset.set_transform(transform_images)
    return torch.utils.data.DataLoader(dataset, batch_size=args.train_batch_size, shuffle=True)


def main(args):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps, mixed_precision="no")
    if args.seed is not None:
        set_seed(args.seed)
    model = UNet2DModel(
        sample_size=args.resolution, in_channels=3, out_channels=3, block_out_channels=(128, 128, 256, 256, 512, 512)
    )
    model = compile_for_training(model, mode="max-autotune-no-cudagraphs")
    ema_model = None
    if args.use_ema:
        ema_model = EMAModel(
            model.parameters(),
            decay=args.ema_max_decay,
            use_ema_warmup=True,
            inv_gamma=args.ema_inv_gamma,
            power=args.ema_power,
            model_cls=UNet2DModel,
        )
    noise_scheduler = DDPMScheduler(
        num_train_timesteps=args.ddpm_num_steps,
        beta_schedule=args.ddpm_beta_schedule,
        prediction_type=args.prediction_type,
    )
    optimizer = torch.optim.AdamW(
        model.parameters(),
        lr=args.learning_rate,
        betas=(args.adam_beta1, args.adam_beta2),
        weight_decay=args.adam_weight_decay,
        eps=args.adam_epsilon,
    )
    train_dataloader = build_dataloader(args)
    num_update_steps_per_epoch = math.ceil(len(train_dataloader) / args.gradient_accumulation_steps)
    lr_scheduler = get_scheduler(
        args.lr_scheduler,
        optimizer=optimizer,
        num_warmup_steps=args.lr_warmup_steps * args.gradient_accumulation_steps,
        num_training_steps=num_update_steps_per_epoch * args.num_epochs,
    )
    model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, lr_scheduler
    )
    if ema_model is not None:
        ema_model.to(accelerator.device)

    global_step = 0
    for epoch in range(args.num_epochs):
        model.train()
        progress_bar = tqdm(total=num_update_steps_per_epoch, disable=not accelerator.is_local_main_process)
        for batch in train_dataloader:
            clean_images = batch["input"]
            noise = torch.randn(clean_images.shape, device=clean_images.device)
            timesteps = torch.randint(
                0, noise_scheduler.config.num_train_timesteps, (clean_images.shape[0],), device=clean_images.device
            ).long()
            noisy_images = noise_scheduler.add_noise(clean_images, noise, timesteps)
            with accelerator.accumulate(model):
                model_output = model(noisy_images, timesteps).sample
                if args.prediction_type == "epsilon":
                    loss = F.mse_loss(model_output.float(), noise.float())
                else:
                    alpha_t = noise_scheduler.alphas_cumprod.to(timesteps.device)[timesteps][:, None, None, None]
                    snr_weights = alpha_t / (1 - alpha_t)
                    loss = (
                        snr_weights * F.mse_loss(model_output.float(), clean_images.float(), reduction="none")
                    ).mean()
                accelerator.backward(loss)  # ok: compiled, but no autocast anywhere
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                if ema_model is not None:
                    ema_model.step(model.parameters())
                progress_bar.update(1)
                global_step += 1
            progress_bar.set_postfix(loss=loss.detach().item(), step=global_step)
        if accelerator.is_main_process and (epoch + 1) % args.save_images_epochs == 0:
            pipeline = DDPMPipeline(unet=unwrap_model(model), scheduler=noise_scheduler)
            generator = torch.Generator(device=pipeline.device).manual_seed(0)
            pipeline(
                generator=generator, batch_size=args.eval_batch_size, num_inference_steps=args.ddpm_num_inference_steps
            )
        if accelerator.is_main_process and (epoch + 1) % args.save_model_epochs == 0:
            DDPMPipeline(unet=unwrap_model(model), scheduler=noise_scheduler).save_pretrained(args.output_dir)
            os.makedirs(args.output_dir, exist_ok=True)
    accelerator.end_training()


if __name__ == "__main__":
    main(parse_args())
