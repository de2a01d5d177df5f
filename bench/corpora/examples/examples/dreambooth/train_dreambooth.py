"""DreamBooth: teach a text-to-image UNet a subject from a few images, with prior preservation.

The UNet is compiled with the library's ``compile_for_training`` and its forward runs under the
library's ``autocast_for`` (fp16 or bf16 from ``--mixed_precision``); the backward of the loss runs
after the autocast region, so the compiled backward was traced for autocast on while eager's backward
runs with it off (CAL002, the default ``backward_pass_autocast``).
"""

import argparse
import hashlib
import itertools
import logging
import math
import os
from pathlib import Path

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import ProjectConfiguration
from PIL import Image
from torch.utils.data import Dataset
from torchvision import transforms
from tqdm.auto import tqdm
from transformers import AutoTokenizer, CLIPTextModel

from difflab import AutoencoderKL, DDPMScheduler, DiffusionPipeline, StableDiffusionPipeline, UNet2DConditionModel
from difflab.optimization import get_scheduler
from difflab.training_utils import (
    autocast_for,
    compile_for_training,
    free_memory,
    set_seed,
    unwrap_model,
    weight_dtype_for,
)
from difflab.utils import check_min_version
from difflab.utils.hub_utils import load_or_create_model_card, populate_model_card, save_model_card

check_min_version("0.9.0")
logger = logging.getLogger(__name__)

#: The model family this copy of the example trains (the examples folder holds one script per family).
VARIANT = "base"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=f"DreamBooth training of {VARIANT}.")
    parser.add_argument("--pretrained_model_name_or_path", type=str, required=True)
    parser.add_argument("--revision", type=str, default=None)
    parser.add_argument("--tokenizer_name", type=str, default=None)
    parser.add_argument("--instance_data_dir", type=str, required=True)
    parser.add_argument("--class_data_dir", type=str, default=None)
    parser.add_argument("--instance_prompt", type=str, required=True)
    parser.add_argument("--class_prompt", type=str, default=None)
    parser.add_argument("--with_prior_preservation", action="store_true")
    parser.add_argument("--prior_loss_weight", type=float, default=1.0)
    parser.add_argument("--num_class_images", type=int, default=100)
    parser.add_argument("--output_dir", type=str, default=f"dreambooth-{VARIANT}")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--resolution", type=int, default=512)
    parser.add_argument("--center_crop", action="store_true")
    parser.add_argument("--train_text_encoder", action="store_true")
    parser.add_argument("--train_batch_size", type=int, default=4)
    parser.add_argument("--sample_batch_size", type=int, default=4)
    parser.add_argument("--num_train_epochs", type=int, default=1)
    parser.add_argument("--max_train_steps", type=int, default=None)
    parser.add_argument("--checkpointing_steps", type=int, default=500)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--gradient_checkpointing", action="store_true")
    parser.add_argument("--learning_rate", type=float, default=5e-6)
    parser.add_argument("--lr_scheduler", type=str, default="constant")
    parser.add_argument("--lr_warmup_steps", type=int, default=500)
    parser.add_argument("--lr_num_cycles", type=int, default=1)
    parser.add_argument("--lr_power", type=float, default=1.0)
    parser.add_argument("--adam_beta1", type=float, default=0.9)
    parser.add_argument("--adam_beta2", type=float, default=0.999)
    parser.add_argument("--adam_weight_decay", type=float, default=1e-2)
    parser.add_argument("--adam_epsilon", type=float, default=1e-08)
    parser.add_argument("--max_grad_norm", default=1.0, type=float)
    parser.add_argument("--mixed_precision", type=str, default="fp16", choices=["no", "fp16", "bf16"])
    parser.add_argument("--compile_backend", type=str, default="inductor")
    parser.add_argument("--compile_mode", type=str, default=None)
    parser.add_argument("--validation_prompt", type=str, default=None)
    parser.add_argument("--num_validation_images", type=int, default=4)
    parser.add_argument("--validation_steps", type=int, default=100)
    parser.add_argument("--offset_noise", action="store_true")
    parser.add_argument("--report_to", type=str, default="tensorboard")
    args = parser.parse_args(argv)
    if args.with_prior_preservation and (args.class_data_dir is None or args.class_prompt is None):
        raise ValueError("Prior preservation needs --class_data_dir and --class_prompt.")
    return args


class DreamBoothDataset(Dataset):
    """Instance images (and class images for prior preservation) with their prompts tokenized."""

    def __init__(
        self,
        instance_data_root,
        instance_prompt,
        tokenizer,
        class_data_root=None,
        class_prompt=None,
        size=512,
        center_crop=False,
    ):
        self.size = size
        self.tokenizer = tokenizer
        self.instance_images_path = sorted(Path(instance_data_root).iterdir())
        self.instance_prompt = instance_prompt
        self.num_instance_images = len(self.instance_images_path)
        self._length = self.num_instance_images
        self.class_images_path = sorted(Path(class_data_root).iterdir()) if class_data_root else []
        self.class_prompt = class_prompt
        self._length = max(self.num_instance_images, len(self.class_images_path))
        self.image_transforms = transforms.Compose(
            [
                transforms.Resize(size, interpolation=transforms.InterpolationMode.BILINEAR),
                transforms.CenterCrop(size) if center_crop else transforms.RandomCrop(size),
                transforms.ToTensor(),
                transforms.Normalize([0.5], [0.5]),
            ]
        )

    def __len__(self):
        return self._length

    def _tokenize(self, prompt):
        return self.tokenizer(
            prompt,
            truncation=True,
            padding="max_length",
            max_length=self.tokenizer.model_max_length,
            return_tensors="pt",
        ).input_ids

    def __getitem__(self, index):
        example = {}
        image = Image.open(self.instance_images_path[index % self.num_instance_images]).convert("RGB")
        example["instance_images"] = self.image_transforms(image)
        example["instance_prompt_ids"] = self._tokenize(self.instance_prompt)
        if self.class_images_path:
            class_image = Image.open(self.class_images_path[index % len(self.class_images_path)]).convert("RGB")
            example["class_images"] = self.image_transforms(class_image)
            example["class_prompt_ids"] = self._tokenize(self.class_prompt)
        return example


def collate_fn(examples, with_prior_preservation=False):
    input_ids = [example["instance_prompt_ids"] for example in examples]
    pixel_values = [example["instance_images"] for example in examples]
    if with_prior_preservation:
        input_ids += [example["class_prompt_ids"] for example in examples]
        pixel_values += [example["class_images"] for example in examples]
    pixel_values = torch.stack(pixel_values).to(memory_format=torch.contiguous_format).float()
    return {"input_ids": torch.cat(input_ids, dim=0), "pixel_values": pixel_values}


def generate_class_images(args, accelerator):
    """Sample the class images prior preservation trains against, with the untouched model."""
    class_images_dir = Path(args.class_data_dir)
    class_images_dir.mkdir(parents=True, exist_ok=True)
    missing = args.num_class_images - len(list(class_images_dir.iterdir()))
    if missing <= 0:
        return
    pipeline = DiffusionPipeline.from_pretrained(args.pretrained_model_name_or_path, torch_dtype=torch.float16)
    pipeline.set_progress_bar_config(disable=True)
    pipeline.to(accelerator.device)
    for start in tqdm(range(0, missing, args.sample_batch_size), disable=not accelerator.is_local_main_process):
        prompts = [args.class_prompt] * min(args.sample_batch_size, missing - start)
        for image in pipeline(prompts).images:
            digest = hashlib.sha1(image.tobytes()).hexdigest()
            image.save(class_images_dir / f"{start}-{digest}.jpg")
    del pipeline
    free_memory()


def log_validation(text_encoder, tokenizer, unet, vae, args, accelerator, weight_dtype, global_step):
    pipeline = StableDiffusionPipeline.from_pretrained(
        args.pretrained_model_name_or_path,
        tokenizer=tokenizer,
        text_encoder=unwrap_model(text_encoder),
        unet=unwrap_model(unet),
        vae=vae,
        torch_dtype=weight_dtype,
    )
    pipeline = pipeline.to(accelerator.device)
    generator = None if args.seed is None else torch.Generator(device=accelerator.device).manual_seed(args.seed)
    images = [
        pipeline(args.validation_prompt, num_inference_steps=25, generator=generator).images[0]
        for _ in range(args.num_validation_images)
    ]
    logger.info("step %d: %d validation images", global_step, len(images))
    del pipeline
    free_memory()
    return images


def main(args):
    accelerator = Accelerator(
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        log_with=args.report_to,
        project_config=ProjectConfiguration(project_dir=args.output_dir),
    )
    if args.seed is not None:
        set_seed(args.seed)
    if args.with_prior_preservation:
        generate_class_images(args, accelerator)
    os.makedirs(args.output_dir, exist_ok=True)

    tokenizer = AutoTokenizer.from_pretrained(
        args.tokenizer_name or args.pretrained_model_name_or_path, subfolder="tokenizer"
    )
    noise_scheduler = DDPMScheduler.from_pretrained(args.pretrained_model_name_or_path, subfolder="scheduler")
    text_encoder = CLIPTextModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="text_encoder")
    vae = AutoencoderKL.from_pretrained(args.pretrained_model_name_or_path, subfolder="vae")
    unet = UNet2DConditionModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="unet")
    vae.requires_grad_(False)
    if not args.train_text_encoder:
        text_encoder.requires_grad_(False)
    if args.gradient_checkpointing:
        unet.enable_gradient_checkpointing()
    unet = compile_for_training(unet, backend=args.compile_backend, mode=args.compile_mode)

    params_to_optimize = (
        itertools.chain(unet.parameters(), text_encoder.parameters()) if args.train_text_encoder else unet.parameters()
    )
    optimizer = torch.optim.AdamW(
        params_to_optimize,
        lr=args.learning_rate,
        betas=(args.adam_beta1, args.adam_beta2),
        weight_decay=args.adam_weight_decay,
        eps=args.adam_epsilon,
    )
    train_dataset = DreamBoothDataset(
        args.instance_data_dir,
        args.instance_prompt,
        tokenizer,
        class_data_root=args.class_data_dir if args.with_prior_preservation else None,
        class_prompt=args.class_prompt,
        size=args.resolution,
        center_crop=args.center_crop,
    )
    train_dataloader = torch.utils.data.DataLoader(
        train_dataset,
        batch_size=args.train_batch_size,
        shuffle=True,
        collate_fn=lambda examples: collate_fn(examples, args.with_prior_preservation),
    )
    num_update_steps_per_epoch = math.ceil(len(train_dataloader) / args.gradient_accumulation_steps)
    if args.max_train_steps is None:
        args.max_train_steps = args.num_train_epochs * num_update_steps_per_epoch
    lr_scheduler = get_scheduler(
        args.lr_scheduler,
        optimizer=optimizer,
        num_warmup_steps=args.lr_warmup_steps,
        num_training_steps=args.max_train_steps,
        num_cycles=args.lr_num_cycles,
        power=args.lr_power,
    )
    optimizer, train_dataloader, lr_scheduler = accelerator.prepare(optimizer, train_dataloader, lr_scheduler)
    weight_dtype = weight_dtype_for(args.mixed_precision)
    vae.to(accelerator.device, dtype=weight_dtype)
    unet.to(accelerator.device)
    text_encoder.to(accelerator.device, dtype=torch.float32 if args.train_text_encoder else weight_dtype)

    global_step = 0
    progress_bar = tqdm(range(args.max_train_steps), disable=not accelerator.is_local_main_process)
    for epoch in range(args.num_train_epochs):
        unet.train()
        for batch in train_dataloader:
            pixel_values = batch["pixel_values"].to(dtype=weight_dtype)
            model_input = vae.encode(pixel_values).latent_dist.sample() * vae.config.scaling_factor
            noise = torch.randn_like(model_input)
            if args.offset_noise:
                noise += 0.1 * torch.randn(model_input.shape[0], model_input.shape[1], 1, 1, device=model_input.device)
            timesteps = torch.randint(
                0, noise_scheduler.config.num_train_timesteps, (model_input.shape[0],), device=model_input.device
            ).long()
            noisy_model_input = noise_scheduler.add_noise(model_input, noise, timesteps)
            encoder_hidden_states = text_encoder(batch["input_ids"])[0]
            with autocast_for(args.mixed_precision, accelerator.device.type):
                model_pred = unet(noisy_model_input, timesteps, encoder_hidden_states, return_dict=False)[0]
            target = (
                noise
                if noise_scheduler.config.prediction_type == "epsilon"
                else noise_scheduler.get_velocity(model_input, noise, timesteps)
            )
            if args.with_prior_preservation:
                model_pred, model_pred_prior = torch.chunk(model_pred, 2, dim=0)
                target, target_prior = torch.chunk(target, 2, dim=0)
                prior_loss = F.mse_loss(model_pred_prior.float(), target_prior.float(), reduction="mean")
            else:
                prior_loss = 0.0
            loss = (
                F.mse_loss(model_pred.float(), target.float(), reduction="mean") + args.prior_loss_weight * prior_loss
            )
            loss.backward()  # expect: CAL002
            torch.nn.utils.clip_grad_norm_(unet.parameters(), args.max_grad_norm)
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            progress_bar.update(1)
            global_step += 1
            if accelerator.is_main_process and global_step % args.checkpointing_steps == 0:
                accelerator.save_state(os.path.join(args.output_dir, f"checkpoint-{global_step}"))
            if args.validation_prompt is not None and global_step % args.validation_steps == 0:
                log_validation(text_encoder, tokenizer, unet, vae, args, accelerator, weight_dtype, global_step)
            progress_bar.set_postfix(loss=loss.detach().item(), lr=lr_scheduler.get_last_lr()[0])
            if global_step >= args.max_train_steps:
                break
        logger.info("epoch %d done", epoch)

    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        pipeline = StableDiffusionPipeline.from_pretrained(
            args.pretrained_model_name_or_path, unet=unwrap_model(unet), text_encoder=unwrap_model(text_encoder)
        )
        pipeline.save_pretrained(args.output_dir)
        card = load_or_create_model_card(
            args.output_dir, from_training=True, base_model=args.pretrained_model_name_or_path
        )
        save_model_card(populate_model_card(card, tags=["dreambooth", VARIANT]), args.output_dir)
    accelerator.end_training()


if __name__ == "__main__":
    main(parse_args())
