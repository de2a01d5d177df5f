"""Train a ControlNet beside a frozen text-to-image UNet (conditioning images: edges, depth, poses).

The ControlNet is compiled with the library's ``compile_for_training`` and its forward runs under the library's
``autocast_for``; the compiled call is wrapped in ``backward_pass_autocast="off"``, which is right for
a backward that runs after the autocast region: nothing is reported.
"""

import argparse
import logging
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import ProjectConfiguration
from datasets import load_dataset
from torch._functorch import config as functorch_config
from torchvision import transforms
from tqdm.auto import tqdm
from transformers import AutoTokenizer, CLIPTextModel

from difflab import (
    AutoencoderKL,
    ControlNetModel,
    DDPMScheduler,
    StableDiffusionControlNetPipeline,
    UNet2DConditionModel,
)
from difflab.optimization import get_scheduler
from difflab.training_utils import (
    autocast_for,
    compile_for_training,
    free_memory,
    set_seed,
    unwrap_model,
    weight_dtype_for,
)

logger = logging.getLogger(__name__)

#: The model family this copy of the example trains (the examples folder holds one script per family).
VARIANT = "base"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=f"Train a ControlNet for {VARIANT}.")
    parser.add_argument("--pretrained_model_name_or_path", type=str, required=True)
    parser.add_argument("--controlnet_model_name_or_path", type=str, default=None)
    parser.add_argument("--output_dir", type=str, default=f"controlnet-{VARIANT}")
    parser.add_argument("--dataset_name", type=str, default=None)
    parser.add_argument("--train_data_dir", type=str, default=None)
    parser.add_argument("--image_column", type=str, default="image")
    parser.add_argument("--conditioning_image_column", type=str, default="conditioning_image")
    parser.add_argument("--caption_column", type=str, default="text")
    parser.add_argument("--resolution", type=int, default=512)
    parser.add_argument("--train_batch_size", type=int, default=4)
    parser.add_argument("--num_train_epochs", type=int, default=1)
    parser.add_argument("--max_train_steps", type=int, default=None)
    parser.add_argument("--checkpointing_steps", type=int, default=500)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--gradient_checkpointing", action="store_true")
    parser.add_argument("--learning_rate", type=float, default=5e-6)
    parser.add_argument("--lr_scheduler", type=str, default="constant")
    parser.add_argument("--lr_warmup_steps", type=int, default=500)
    parser.add_argument("--adam_weight_decay", type=float, default=1e-2)
    parser.add_argument("--max_grad_norm", default=1.0, type=float)
    parser.add_argument("--mixed_precision", type=str, default="fp16", choices=["no", "fp16", "bf16"])
    parser.add_argument("--proportion_empty_prompts", type=float, default=0)
    parser.add_argument("--validation_prompt", type=str, default=None, nargs="+")
    parser.add_argument("--validation_image", type=str, default=None, nargs="+")
    parser.add_argument("--validation_steps", type=int, default=100)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args(argv)
    if args.proportion_empty_prompts < 0 or args.proportion_empty_prompts > 1:
        raise ValueError("--proportion_empty_prompts must be in [0, 1].")
    return args


def make_train_dataset(args, tokenizer, accelerator):
    dataset = load_dataset(args.dataset_name, data_dir=args.train_data_dir)
    image_transforms = transforms.Compose(
        [
            transforms.Resize(args.resolution, interpolation=transforms.InterpolationMode.BILINEAR),
            transforms.CenterCrop(args.resolution),
            transforms.ToTensor(),
            transforms.Normalize([0.5], [0.5]),
        ]
    )
    conditioning_transforms = transforms.Compose(
        [
            transforms.Resize(args.resolution, interpolation=transforms.InterpolationMode.BILINEAR),
            transforms.CenterCrop(args.resolution),
            transforms.ToTensor(),
        ]
    )

    def tokenize_captions(examples):
        captions = [
            "" if np.random.random() < args.proportion_empty_prompts else (c if isinstance(c, str) else c[0])
            for c in examples[args.caption_column]
        ]
        return tokenizer(
            captions, max_length=tokenizer.model_max_length, padding="max_length", truncation=True, return_tensors="pt"
        ).input_ids

    def preprocess_train(examples):
        examples["pixel_values"] = [image_transforms(i.convert("RGB")) for i in examples[args.image_column]]
        examples["conditioning_pixel_values"] = [
            conditioning_transforms(i.convert("RGB")) for i in examples[args.conditioning_image_column]
        ]
        examples["input_ids"] = tokenize_captions(examples)
        return examples

    with accelerator.main_process_first():
        return dataset["train"].with_transform(preprocess_train)


def collate_fn(examples):
    return {
        "pixel_values": torch.stack([e["pixel_values"] for e in examples]).float(),
        "conditioning_pixel_values": torch.stack([e["conditioning_pixel_values"] for e in examples]).float(),
        "input_ids": torch.stack([e["input_ids"] for e in examples]),
    }


def log_validation(vae, text_encoder, tokenizer, unet, controlnet, args, accelerator, weight_dtype, step):
    pipeline = StableDiffusionControlNetPipeline.from_pretrained(
        args.pretrained_model_name_or_path,
        vae=vae,
        text_encoder=text_encoder,
        tokenizer=tokenizer,
        unet=unet,
        controlnet=unwrap_model(controlnet),
        torch_dtype=weight_dtype,
    )
    pipeline = pipeline.to(accelerator.device)
    for prompt, image in zip(args.validation_prompt or (), args.validation_image or ()):
        with torch.autocast(accelerator.device.type):
            pipeline(prompt, image, num_inference_steps=20)
    logger.info("validation at step %d", step)
    del pipeline
    free_memory()


def main(args):
    accelerator = Accelerator(
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        project_config=ProjectConfiguration(project_dir=args.output_dir),
    )
    if args.seed is not None:
        set_seed(args.seed)
    os.makedirs(args.output_dir, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(args.pretrained_model_name_or_path, subfolder="tokenizer")
    noise_scheduler = DDPMScheduler.from_pretrained(args.pretrained_model_name_or_path, subfolder="scheduler")
    text_encoder = CLIPTextModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="text_encoder")
    vae = AutoencoderKL.from_pretrained(args.pretrained_model_name_or_path, subfolder="vae")
    unet = UNet2DConditionModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="unet")
    if args.controlnet_model_name_or_path:
        controlnet = ControlNetModel.from_pretrained(args.controlnet_model_name_or_path)
    else:
        controlnet = ControlNetModel.from_unet(unet)
    vae.requires_grad_(False)
    unet.requires_grad_(False)
    text_encoder.requires_grad_(False)
    controlnet.train()
    if args.gradient_checkpointing:
        controlnet.enable_gradient_checkpointing()
    controlnet = compile_for_training(controlnet)

    optimizer = torch.optim.AdamW(controlnet.parameters(), lr=args.learning_rate, weight_decay=args.adam_weight_decay)
    train_dataset = make_train_dataset(args, tokenizer, accelerator)
    train_dataloader = torch.utils.data.DataLoader(
        train_dataset, shuffle=True, collate_fn=collate_fn, batch_size=args.train_batch_size
    )
    num_update_steps_per_epoch = math.ceil(len(train_dataloader) / args.gradient_accumulation_steps)
    if args.max_train_steps is None:
        args.max_train_steps = args.num_train_epochs * num_update_steps_per_epoch
    lr_scheduler = get_scheduler(
        args.lr_scheduler,
        optimizer=optimizer,
        num_warmup_steps=args.lr_warmup_steps,
        num_training_steps=args.max_train_steps,
    )
    optimizer, train_dataloader, lr_scheduler = accelerator.prepare(optimizer, train_dataloader, lr_scheduler)
    weight_dtype = weight_dtype_for(args.mixed_precision)
    vae.to(accelerator.device, dtype=weight_dtype)
    unet.to(accelerator.device, dtype=weight_dtype)
    text_encoder.to(accelerator.device, dtype=weight_dtype)
    controlnet.to(accelerator.device)

    global_step = 0
    progress_bar = tqdm(range(args.max_train_steps), disable=not accelerator.is_local_main_process)
    for epoch in range(args.num_train_epochs):
        for batch in train_dataloader:
            latents = vae.encode(batch["pixel_values"].to(dtype=weight_dtype)).latent_dist.sample()
            latents = latents * vae.config.scaling_factor
            noise = torch.randn_like(latents)
            timesteps = torch.randint(
                0, noise_scheduler.config.num_train_timesteps, (latents.shape[0],), device=latents.device
            ).long()
            noisy_latents = noise_scheduler.add_noise(latents, noise, timesteps)
            encoder_hidden_states = text_encoder(batch["input_ids"], return_dict=False)[0]
            controlnet_image = batch["conditioning_pixel_values"].to(dtype=weight_dtype)
            with functorch_config.patch(backward_pass_autocast="off"):
                with autocast_for(args.mixed_precision, accelerator.device.type):
                    down_block_res_samples, mid_block_res_sample = controlnet(
                        noisy_latents, timesteps, encoder_hidden_states, controlnet_image, return_dict=False
                    )
                    model_pred = unet(
                        noisy_latents,
                        timesteps,
                        encoder_hidden_states,
                        down_block_additional_residuals=[s.to(dtype=weight_dtype) for s in down_block_res_samples],
                        mid_block_additional_residual=mid_block_res_sample.to(dtype=weight_dtype),
                        return_dict=False,
                    )[0]
            target = (
                noise
                if noise_scheduler.config.prediction_type == "epsilon"
                else noise_scheduler.get_velocity(latents, noise, timesteps)
            )
            loss = F.mse_loss(model_pred.float(), target.float(), reduction="mean")
            loss.backward()  # ok: the compiled backward was traced with autocast off
            torch.nn.utils.clip_grad_norm_(controlnet.parameters(), args.max_grad_norm)
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            progress_bar.update(1)
            global_step += 1
            if accelerator.is_main_process and global_step % args.checkpointing_steps == 0:
                accelerator.save_state(os.path.join(args.output_dir, f"checkpoint-{global_step}"))
            if args.validation_prompt is not None and global_step % args.validation_steps == 0:
                log_validation(
                    vae, text_encoder, tokenizer, unet, controlnet, args, accelerator, weight_dtype, global_step
                )
            if global_step >= args.max_train_steps:
                break
        logger.info("epoch %d done", epoch)
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        unwrap_model(controlnet).save_pretrained(args.output_dir)
    accelerator.end_training()


if __name__ == "__main__":
    main(parse_args())
