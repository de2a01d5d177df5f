"""Fine-tune a text-to-image UNet on image-caption pairs (full weights, EMA, Min-SNR weighting).

Mixed precision comes from accelerate: the frozen VAE and text encoder are cast to the weight dtype and
the UNet's forward runs under accelerate's autocast. The UNet is not compiled here.
"""

import argparse
import logging
import math
import os
import shutil

import accelerate
import datasets
import numpy as np
import torch
import torch.nn.functional as F
import transformers
from accelerate import Accelerator
from accelerate.utils import ProjectConfiguration
from torchvision import transforms
from tqdm.auto import tqdm
from transformers import CLIPTextModel, CLIPTokenizer

import difflab
from difflab import AutoencoderKL, DDPMScheduler, StableDiffusionPipeline, UNet2DConditionModel
from difflab.optimization import get_scheduler
from difflab.training_utils import EMAModel, compute_snr, free_memory, set_seed, unwrap_model, weight_dtype_for
from difflab.utils import check_min_version, is_wandb_available, make_image_grid
from difflab.utils.hub_utils import load_or_create_model_card, populate_model_card, save_model_card

check_min_version("0.9.0")
logger = logging.getLogger(__name__)

#: The model family this copy of the example trains (the examples folder holds one script per family).
VARIANT = "base"
DATASET_NAME_MAPPING = {"lambdalabs/naruto-blip-captions": ("image", "text")}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=f"Fine-tune the {VARIANT} text-to-image model.")
    parser.add_argument("--pretrained_model_name_or_path", type=str, required=True)
    parser.add_argument("--revision", type=str, default=None)
    parser.add_argument("--variant", type=str, default=None)
    parser.add_argument("--dataset_name", type=str, default=None)
    parser.add_argument("--train_data_dir", type=str, default=None)
    parser.add_argument("--image_column", type=str, default="image")
    parser.add_argument("--caption_column", type=str, default="text")
    parser.add_argument("--max_train_samples", type=int, default=None)
    parser.add_argument("--validation_prompts", type=str, default=None, nargs="+")
    parser.add_argument("--output_dir", type=str, default=f"sd-{VARIANT}-model-finetuned")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--resolution", type=int, default=512)
    parser.add_argument("--center_crop", action="store_true")
    parser.add_argument("--random_flip", action="store_true")
    parser.add_argument("--train_batch_size", type=int, default=16)
    parser.add_argument("--num_train_epochs", type=int, default=100)
    parser.add_argument("--max_train_steps", type=int, default=None)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--gradient_checkpointing", action="store_true")
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--scale_lr", action="store_true")
    parser.add_argument("--lr_scheduler", type=str, default="constant")
    parser.add_argument("--lr_warmup_steps", type=int, default=500)
    parser.add_argument("--snr_gamma", type=float, default=None)
    parser.add_argument("--use_ema", action="store_true")
    parser.add_argument("--offload_ema", action="store_true")
    parser.add_argument("--non_ema_revision", type=str, default=None)
    parser.add_argument("--dataloader_num_workers", type=int, default=0)
    parser.add_argument("--adam_beta1", type=float, default=0.9)
    parser.add_argument("--adam_beta2", type=float, default=0.999)
    parser.add_argument("--adam_weight_decay", type=float, default=1e-2)
    parser.add_argument("--adam_epsilon", type=float, default=1e-08)
    parser.add_argument("--max_grad_norm", default=1.0, type=float)
    parser.add_argument("--prediction_type", type=str, default=None)
    parser.add_argument("--logging_dir", type=str, default="logs")
    parser.add_argument("--mixed_precision", type=str, default=None, choices=["no", "fp16", "bf16"])
    parser.add_argument("--report_to", type=str, default="tensorboard")
    parser.add_argument("--checkpointing_steps", type=int, default=500)
    parser.add_argument("--checkpoints_total_limit", type=int, default=None)
    parser.add_argument("--resume_from_checkpoint", type=str, default=None)
    parser.add_argument("--noise_offset", type=float, default=0)
    parser.add_argument("--input_perturbation", type=float, default=0)
    parser.add_argument("--validation_epochs", type=int, default=5)
    parser.add_argument("--tracker_project_name", type=str, default="text2image-fine-tune")
    args = parser.parse_args(argv)
    if args.dataset_name is None and args.train_data_dir is None:
        raise ValueError("Need either a dataset name or a training folder.")
    if args.non_ema_revision is None:
        args.non_ema_revision = args.revision
    return args


def log_validation(vae, text_encoder, tokenizer, unet, args, accelerator, weight_dtype, epoch):
    logger.info("Running validation...")
    pipeline = StableDiffusionPipeline.from_pretrained(
        args.pretrained_model_name_or_path,
        vae=accelerator.unwrap_model(vae),
        text_encoder=accelerator.unwrap_model(text_encoder),
        tokenizer=tokenizer,
        unet=accelerator.unwrap_model(unet),
        torch_dtype=weight_dtype,
    )
    pipeline = pipeline.to(accelerator.device)
    pipeline.set_progress_bar_config(disable=True)
    generator = None if args.seed is None else torch.Generator(device=accelerator.device).manual_seed(args.seed)
    images = []
    for prompt in args.validation_prompts or ():
        with torch.autocast("cuda"):
            image = pipeline(prompt, num_inference_steps=20, generator=generator).images[0]
        images.append(image)
    for tracker in accelerator.trackers:
        if tracker.name == "tensorboard":
            np_images = np.stack([np.asarray(img) for img in images])
            tracker.writer.add_images("validation", np_images, epoch, dataformats="NHWC")
    del pipeline
    free_memory()
    return images


def build_transforms(args):
    return transforms.Compose(
        [
            transforms.Resize(args.resolution, interpolation=transforms.InterpolationMode.BILINEAR),
            transforms.CenterCrop(args.resolution) if args.center_crop else transforms.RandomCrop(args.resolution),
            transforms.RandomHorizontalFlip() if args.random_flip else transforms.Lambda(lambda x: x),
            transforms.ToTensor(),
            transforms.Normalize([0.5], [0.5]),
        ]
    )


def tokenize_captions(tokenizer, examples, caption_column, is_train=True):
    captions = []
    for caption in examples[caption_column]:
        if isinstance(caption, str):
            captions.append(caption)
        elif isinstance(caption, (list, np.ndarray)):
            captions.append(caption[0] if not is_train else caption[np.random.randint(len(caption))])
        else:
            raise ValueError(f"Caption column `{caption_column}` should contain strings or lists of strings.")
    inputs = tokenizer(
        captions, max_length=tokenizer.model_max_length, padding="max_length", truncation=True, return_tensors="pt"
    )
    return inputs.input_ids


def collate_fn(examples):
    pixel_values = torch.stack([example["pixel_values"] for example in examples])
    pixel_values = pixel_values.to(memory_format=torch.contiguous_format).float()
    input_ids = torch.stack([example["input_ids"] for example in examples])
    return {"pixel_values": pixel_values, "input_ids": input_ids}


def main(args):
    logging_dir = os.path.join(args.output_dir, args.logging_dir)
    accelerator_project_config = ProjectConfiguration(project_dir=args.output_dir, logging_dir=logging_dir)
    accelerator = Accelerator(
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        mixed_precision=args.mixed_precision,
        log_with=args.report_to,
        project_config=accelerator_project_config,
    )
    if args.report_to == "wandb" and not is_wandb_available():
        raise ImportError("Install wandb to log with it.")
    if accelerator.is_local_main_process:
        datasets.utils.logging.set_verbosity_warning()
        transformers.utils.logging.set_verbosity_warning()
        difflab.utils.logging.set_verbosity_info()
    if args.seed is not None:
        set_seed(args.seed)
    if accelerator.is_main_process and args.output_dir is not None:
        os.makedirs(args.output_dir, exist_ok=True)

    noise_scheduler = DDPMScheduler.from_pretrained(args.pretrained_model_name_or_path, subfolder="scheduler")
    tokenizer = CLIPTokenizer.from_pretrained(args.pretrained_model_name_or_path, subfolder="tokenizer")
    text_encoder = CLIPTextModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="text_encoder")
    vae = AutoencoderKL.from_pretrained(args.pretrained_model_name_or_path, subfolder="vae")
    unet = UNet2DConditionModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="unet")
    vae.requires_grad_(False)
    text_encoder.requires_grad_(False)
    unet.train()
    ema_unet = (
        EMAModel(unet.parameters(), model_cls=UNet2DConditionModel, model_config=unet.config) if args.use_ema else None
    )
    if args.gradient_checkpointing:
        unet.enable_gradient_checkpointing()
    if args.scale_lr:
        args.learning_rate = (
            args.learning_rate * args.gradient_accumulation_steps * args.train_batch_size * accelerator.num_processes
        )
    optimizer = torch.optim.AdamW(
        unet.parameters(),
        lr=args.learning_rate,
        betas=(args.adam_beta1, args.adam_beta2),
        weight_decay=args.adam_weight_decay,
        eps=args.adam_epsilon,
    )

    dataset = datasets.load_dataset(args.dataset_name or "imagefolder", data_dir=args.train_data_dir)
    image_column, caption_column = DATASET_NAME_MAPPING.get(args.dataset_name, (args.image_column, args.caption_column))
    train_transforms = build_transforms(args)

    def preprocess_train(examples):
        images = [image.convert("RGB") for image in examples[image_column]]
        examples["pixel_values"] = [train_transforms(image) for image in images]
        examples["input_ids"] = tokenize_captions(tokenizer, examples, caption_column)
        return examples

    with accelerator.main_process_first():
        if args.max_train_samples is not None:
            dataset["train"] = dataset["train"].shuffle(seed=args.seed).select(range(args.max_train_samples))
        train_dataset = dataset["train"].with_transform(preprocess_train)
    train_dataloader = torch.utils.data.DataLoader(
        train_dataset,
        shuffle=True,
        collate_fn=collate_fn,
        batch_size=args.train_batch_size,
        num_workers=args.dataloader_num_workers,
    )
    num_update_steps_per_epoch = math.ceil(len(train_dataloader) / args.gradient_accumulation_steps)
    if args.max_train_steps is None:
        args.max_train_steps = args.num_train_epochs * num_update_steps_per_epoch
    lr_scheduler = get_scheduler(
        args.lr_scheduler,
        optimizer=optimizer,
        num_warmup_steps=args.lr_warmup_steps * accelerator.num_processes,
        num_training_steps=args.max_train_steps * accelerator.num_processes,
    )
    unet, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
        unet, optimizer, train_dataloader, lr_scheduler
    )
    if ema_unet is not None:
        ema_unet.to(accelerator.device)
    weight_dtype = weight_dtype_for(accelerator.mixed_precision)
    text_encoder.to(accelerator.device, dtype=weight_dtype)
    vae.to(accelerator.device, dtype=weight_dtype)
    if accelerator.is_main_process:
        accelerator.init_trackers(
            args.tracker_project_name, {k: v for k, v in vars(args).items() if k != "validation_prompts"}
        )

    global_step = 0
    progress_bar = tqdm(range(args.max_train_steps), disable=not accelerator.is_local_main_process)
    for epoch in range(args.num_train_epochs):
        train_loss = 0.0
        for batch in train_dataloader:
            with accelerator.accumulate(unet):
                latents = vae.encode(batch["pixel_values"].to(weight_dtype)).latent_dist.sample()
                latents = latents * vae.config.scaling_factor
                noise = torch.randn_like(latents)
                if args.noise_offset:
                    noise += args.noise_offset * torch.randn(
                        (latents.shape[0], latents.shape[1], 1, 1), device=latents.device
                    )
                bsz = latents.shape[0]
                timesteps = torch.randint(0, noise_scheduler.config.num_train_timesteps, (bsz,), device=latents.device)
                noisy_latents = noise_scheduler.add_noise(latents, noise, timesteps.long())
                encoder_hidden_states = text_encoder(batch["input_ids"], return_dict=False)[0]
                if args.prediction_type is not None:
                    noise_scheduler.register_to_config(prediction_type=args.prediction_type)
                if noise_scheduler.config.prediction_type == "epsilon":
                    target = noise
                elif noise_scheduler.config.prediction_type == "v_prediction":
                    target = noise_scheduler.get_velocity(latents, noise, timesteps)
                else:
                    raise ValueError(f"Unknown prediction type {noise_scheduler.config.prediction_type}")
                model_pred = unet(noisy_latents, timesteps, encoder_hidden_states, return_dict=False)[0]
                if args.snr_gamma is None:
                    loss = F.mse_loss(model_pred.float(), target.float(), reduction="mean")
                else:
                    snr = compute_snr(noise_scheduler, timesteps)
                    mse_loss_weights = torch.stack([snr, args.snr_gamma * torch.ones_like(timesteps)], dim=1).min(
                        dim=1
                    )[0]
                    mse_loss_weights = mse_loss_weights / snr
                    loss = F.mse_loss(model_pred.float(), target.float(), reduction="none")
                    loss = (loss.mean(dim=list(range(1, len(loss.shape)))) * mse_loss_weights).mean()
                avg_loss = accelerator.gather(loss.repeat(args.train_batch_size)).mean()
                train_loss += avg_loss.item() / args.gradient_accumulation_steps
                accelerator.backward(loss)  # ok: the UNet is not compiled
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
                accelerator.log({"train_loss": train_loss}, step=global_step)
                train_loss = 0.0
                if global_step % args.checkpointing_steps == 0 and accelerator.is_main_process:
                    if args.checkpoints_total_limit is not None:
                        checkpoints = sorted(
                            (d for d in os.listdir(args.output_dir) if d.startswith("checkpoint")),
                            key=lambda x: int(x.split("-")[1]),
                        )
                        for removing in checkpoints[: max(0, len(checkpoints) - args.checkpoints_total_limit + 1)]:
                            shutil.rmtree(os.path.join(args.output_dir, removing))
                    accelerator.save_state(os.path.join(args.output_dir, f"checkpoint-{global_step}"))
            if global_step >= args.max_train_steps:
                break
        if accelerator.is_main_process and args.validation_prompts and epoch % args.validation_epochs == 0:
            if ema_unet is not None:
                ema_unet.store(unet.parameters())
                ema_unet.copy_to(unet.parameters())
            log_validation(vae, text_encoder, tokenizer, unet, args, accelerator, weight_dtype, epoch)
            if ema_unet is not None:
                ema_unet.restore(unet.parameters())

    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        unet = unwrap_model(unet)
        if ema_unet is not None:
            ema_unet.copy_to(unet.parameters())
        pipeline = StableDiffusionPipeline.from_pretrained(
            args.pretrained_model_name_or_path, text_encoder=text_encoder, vae=vae, unet=unet
        )
        pipeline.save_pretrained(args.output_dir)
        images = log_validation(vae, text_encoder, tokenizer, unet, args, accelerator, weight_dtype, "final")
        card = load_or_create_model_card(
            args.output_dir, from_training=True, base_model=args.pretrained_model_name_or_path
        )
        card = populate_model_card(card, tags=["text-to-image", VARIANT])
        save_model_card(card, args.output_dir)
        if images:
            make_image_grid(images, 1, len(images))
    accelerator.end_training()
    logger.info("accelerate %s", accelerate.__version__)


if __name__ == "__main__":
    main(parse_args())
