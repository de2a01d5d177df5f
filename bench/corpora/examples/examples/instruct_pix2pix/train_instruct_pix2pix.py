"""InstructPix2Pix: train a UNet to edit an image following a written instruction.

accelerate runs in fp16 (``Accelerator(mixed_precision="fp16")``): ``accelerator.prepare`` wraps the
compiled UNet's forward in autocast, and ``accelerator.backward`` runs the backward outside it
(CAL002 with the default ``backward_pass_autocast``).
"""

import argparse
import logging
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator
from datasets import load_dataset
from torchvision import transforms
from tqdm.auto import tqdm
from transformers import CLIPTextModel, CLIPTokenizer

from difflab import AutoencoderKL, DDPMScheduler, StableDiffusionImg2ImgPipeline, UNet2DConditionModel
from difflab.optimization import get_scheduler
from difflab.training_utils import EMAModel, compile_for_training, set_seed, unwrap_model

logger = logging.getLogger(__name__)

#: The model family this copy of the example trains (the examples folder holds one script per family).
VARIANT = "base"
DATASET_NAME_MAPPING = {"fusing/instructpix2pix-1000-samples": ("input_image", "edit_prompt", "edited_image")}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=f"InstructPix2Pix training of {VARIANT}.")
    parser.add_argument("--pretrained_model_name_or_path", type=str, required=True)
    parser.add_argument("--dataset_name", type=str, default="fusing/instructpix2pix-1000-samples")
    parser.add_argument("--output_dir", type=str, default=f"instruct-pix2pix-{VARIANT}")
    parser.add_argument("--resolution", type=int, default=256)
    parser.add_argument("--train_batch_size", type=int, default=16)
    parser.add_argument("--num_train_epochs", type=int, default=100)
    parser.add_argument("--max_train_steps", type=int, default=None)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--lr_scheduler", type=str, default="constant")
    parser.add_argument("--lr_warmup_steps", type=int, default=500)
    parser.add_argument("--conditioning_dropout_prob", type=float, default=None)
    parser.add_argument("--use_ema", action="store_true")
    parser.add_argument("--max_grad_norm", default=1.0, type=float)
    parser.add_argument("--checkpointing_steps", type=int, default=500)
    parser.add_argument("--seed", type=int, default=None)
    return parser.parse_args(argv)


def convert_to_np(image, resolution):
    return np.array(image.convert("RGB").resize((resolution, resolution))).transpose(2, 0, 1)


def widen_input_conv(unet):
    """Eight input channels: the noisy latents and the original image's latents, the new ones zero."""
    in_channels = 8
    out_channels = unet.conv_in.out_channels
    with torch.no_grad():
        new_conv_in = nn.Conv2d(
            in_channels, out_channels, unet.conv_in.kernel_size, unet.conv_in.stride, unet.conv_in.padding
        )
        new_conv_in.weight.zero_()
        new_conv_in.weight[:, :4, :, :].copy_(unet.conv_in.weight)
        unet.conv_in = new_conv_in
    unet.register_to_config(in_channels=in_channels)


def main(args):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps, mixed_precision="fp16")
    if args.seed is not None:
        set_seed(args.seed)
    generator = torch.Generator(device=accelerator.device).manual_seed(args.seed or 0)
    noise_scheduler = DDPMScheduler.from_pretrained(args.pretrained_model_name_or_path, subfolder="scheduler")
    tokenizer = CLIPTokenizer.from_pretrained(args.pretrained_model_name_or_path, subfolder="tokenizer")
    text_encoder = CLIPTextModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="text_encoder")
    vae = AutoencoderKL.from_pretrained(args.pretrained_model_name_or_path, subfolder="vae")
    unet = UNet2DConditionModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="unet")
    widen_input_conv(unet)
    vae.requires_grad_(False)
    text_encoder.requires_grad_(False)
    ema_unet = (
        EMAModel(unet.parameters(), model_cls=UNet2DConditionModel, model_config=unet.config) if args.use_ema else None
    )
    unet = compile_for_training(unet)
    optimizer = torch.optim.AdamW(unet.parameters(), lr=args.learning_rate)
    dataset = load_dataset(args.dataset_name, split="train")
    original_column, edit_column, edited_column = DATASET_NAME_MAPPING[args.dataset_name]
    train_transforms = transforms.Compose([transforms.CenterCrop(args.resolution), transforms.RandomHorizontalFlip()])

    def preprocess_train(examples):
        original = np.concatenate([convert_to_np(i, args.resolution) for i in examples[original_column]])
        edited = np.concatenate([convert_to_np(i, args.resolution) for i in examples[edited_column]])
        images = torch.tensor(np.concatenate([original, edited]))
        images = train_transforms(2 * (images / 255) - 1).reshape(-1, 2, 3, args.resolution, args.resolution)
        examples["original_pixel_values"] = images[:, 0]
        examples["edited_pixel_values"] = images[:, 1]
        examples["input_ids"] = tokenizer(
            list(examples[edit_column]),
            max_length=tokenizer.model_max_length,
            padding="max_length",
            truncation=True,
            return_tensors="pt",
        ).input_ids
        return examples

    dataset = dataset.with_transform(preprocess_train)
    dataloader = torch.utils.data.DataLoader(dataset, shuffle=True, batch_size=args.train_batch_size)
    num_update_steps_per_epoch = math.ceil(len(dataloader) / args.gradient_accumulation_steps)
    if args.max_train_steps is None:
        args.max_train_steps = args.num_train_epochs * num_update_steps_per_epoch
    lr_scheduler = get_scheduler(
        args.lr_scheduler, optimizer, num_warmup_steps=args.lr_warmup_steps, num_training_steps=args.max_train_steps
    )
    unet, optimizer, dataloader, lr_scheduler = accelerator.prepare(unet, optimizer, dataloader, lr_scheduler)
    weight_dtype = torch.float16
    text_encoder.to(accelerator.device, dtype=weight_dtype)
    vae.to(accelerator.device, dtype=weight_dtype)

    global_step = 0
    progress_bar = tqdm(range(args.max_train_steps), disable=not accelerator.is_local_main_process)
    for epoch in range(args.num_train_epochs):
        for batch in dataloader:
            with accelerator.accumulate(unet):
                latents = vae.encode(batch["edited_pixel_values"].to(weight_dtype)).latent_dist.sample()
                latents = latents * vae.config.scaling_factor
                noise = torch.randn_like(latents)
                bsz = latents.shape[0]
                timesteps = torch.randint(0, noise_scheduler.config.num_train_timesteps, (bsz,), device=latents.device)
                noisy_latents = noise_scheduler.add_noise(latents, noise, timesteps.long())
                encoder_hidden_states = text_encoder(batch["input_ids"])[0]
                original_image_embeds = vae.encode(batch["original_pixel_values"].to(weight_dtype)).latent_dist.mode()
                if args.conditioning_dropout_prob is not None:
                    random_p = torch.rand(bsz, device=latents.device, generator=generator)
                    prompt_mask = (random_p < 2 * args.conditioning_dropout_prob).reshape(bsz, 1, 1)
                    encoder_hidden_states = torch.where(
                        prompt_mask, torch.zeros_like(encoder_hidden_states), encoder_hidden_states
                    )
                    image_mask = 1 - (
                        (random_p >= args.conditioning_dropout_prob) * (random_p < 3 * args.conditioning_dropout_prob)
                    ).to(original_image_embeds.dtype)
                    original_image_embeds = image_mask.reshape(bsz, 1, 1, 1) * original_image_embeds
                concatenated = torch.cat([noisy_latents, original_image_embeds], dim=1)
                model_pred = unet(concatenated, timesteps, encoder_hidden_states, return_dict=False)[0]
                loss = F.mse_loss(model_pred.float(), noise.float(), reduction="mean")
                accelerator.backward(loss)  # expect: CAL002
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(unet.parameters(), args.max_grad_norm)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                if ema_unet is not None:
                    ema_unet.step(unet.parameters())
                progress_bar.update(1)
                global_step += 1
                if accelerator.is_main_process and global_step % args.checkpointing_steps == 0:
                    accelerator.save_state(os.path.join(args.output_dir, f"checkpoint-{global_step}"))
            if global_step >= args.max_train_steps:
                break
        logger.info("epoch %d done", epoch)
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        pipeline = StableDiffusionImg2ImgPipeline.from_pretrained(
            args.pretrained_model_name_or_path, text_encoder=text_encoder, vae=vae, unet=unwrap_model(unet)
        )
        pipeline.save_pretrained(args.output_dir)
    accelerator.end_training()


if __name__ == "__main__":
    main(parse_args())
