"""LoRA fine-tuning of a rectified-flow transformer (flow matching with logit-normal timesteps).

The transformer runs eagerly under accelerate's autocast (``--mixed_precision``); only the LoRA
layers train. Nothing is compiled, so nothing is reported.
"""

import argparse
import logging
import math
import os

import torch
from accelerate import Accelerator
from datasets import load_dataset
from torchvision import transforms
from tqdm.auto import tqdm
from transformers import CLIPTextModel, CLIPTokenizer, T5EncoderModel, T5TokenizerFast

from difflab import AutoencoderKL, FlowMatchEulerDiscreteScheduler, FluxPipeline, FluxTransformer2DModel
from difflab.models.lora import inject_lora, lora_state_dict
from difflab.optimization import get_scheduler
from difflab.training_utils import (
    cast_training_params,
    compute_density_for_timestep_sampling,
    compute_loss_weighting_for_flow,
    free_memory,
    get_sigmas,
    set_seed,
    unwrap_model,
    weight_dtype_for,
)

logger = logging.getLogger(__name__)

#: The model family this copy of the example trains (the examples folder holds one script per family).
VARIANT = "base"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=f"Flux-style LoRA training of {VARIANT}.")
    parser.add_argument("--pretrained_model_name_or_path", type=str, required=True)
    parser.add_argument("--dataset_name", type=str, required=True)
    parser.add_argument("--caption_column", type=str, default="prompt")
    parser.add_argument("--output_dir", type=str, default=f"flux-lora-{VARIANT}")
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--resolution", type=int, default=1024)
    parser.add_argument("--train_batch_size", type=int, default=1)
    parser.add_argument("--max_train_steps", type=int, default=1000)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=4)
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--lr_scheduler", type=str, default="constant")
    parser.add_argument("--lr_warmup_steps", type=int, default=0)
    parser.add_argument("--guidance_scale", type=float, default=3.5)
    parser.add_argument(
        "--weighting_scheme", type=str, default="none", choices=["sigma_sqrt", "logit_normal", "mode", "cosmap", "none"]
    )
    parser.add_argument("--logit_mean", type=float, default=0.0)
    parser.add_argument("--logit_std", type=float, default=1.0)
    parser.add_argument("--mode_scale", type=float, default=1.29)
    parser.add_argument("--max_sequence_length", type=int, default=512)
    parser.add_argument("--mixed_precision", type=str, default="bf16", choices=["no", "fp16", "bf16"])
    parser.add_argument("--validation_prompt", type=str, default=None)
    parser.add_argument("--seed", type=int, default=None)
    return parser.parse_args(argv)


def encode_prompt(text_encoders, tokenizers, prompt, max_sequence_length, device):
    clip_ids = tokenizers[0](
        prompt, padding="max_length", max_length=77, truncation=True, return_tensors="pt"
    ).input_ids
    pooled = text_encoders[0](clip_ids.to(device), output_hidden_states=False).pooler_output
    t5_ids = tokenizers[1](
        prompt, padding="max_length", max_length=max_sequence_length, truncation=True, return_tensors="pt"
    ).input_ids
    prompt_embeds = text_encoders[1](t5_ids.to(device), output_hidden_states=False)[0]
    return prompt_embeds, pooled


def main(args):
    accelerator = Accelerator(
        gradient_accumulation_steps=args.gradient_accumulation_steps, mixed_precision=args.mixed_precision
    )
    if args.seed is not None:
        set_seed(args.seed)
    tokenizers = (
        CLIPTokenizer.from_pretrained(args.pretrained_model_name_or_path, subfolder="tokenizer"),
        T5TokenizerFast.from_pretrained(args.pretrained_model_name_or_path, subfolder="tokenizer_2"),
    )
    text_encoders = (
        CLIPTextModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="text_encoder"),
        T5EncoderModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="text_encoder_2"),
    )
    vae = AutoencoderKL.from_pretrained(args.pretrained_model_name_or_path, subfolder="vae")
    transformer = FluxTransformer2DModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="transformer")
    noise_scheduler = FlowMatchEulerDiscreteScheduler.from_pretrained(
        args.pretrained_model_name_or_path, subfolder="scheduler"
    )
    weight_dtype = weight_dtype_for(args.mixed_precision)
    for module in (vae, transformer, *text_encoders):
        module.requires_grad_(False)
        module.to(accelerator.device, dtype=weight_dtype)
    lora_params = inject_lora(transformer, rank=args.rank)
    cast_training_params(transformer, dtype=torch.float32)
    optimizer = torch.optim.AdamW(lora_params, lr=args.learning_rate)
    dataset = load_dataset(args.dataset_name, split="train")
    image_transforms = transforms.Compose(
        [
            transforms.Resize(args.resolution),
            transforms.CenterCrop(args.resolution),
            transforms.ToTensor(),
            transforms.Normalize([0.5], [0.5]),
        ]
    )
    dataset.set_transform(
        lambda ex: {
            "pixel_values": [image_transforms(i.convert("RGB")) for i in ex["image"]],
            "prompts": ex[args.caption_column],
        }
    )
    dataloader = torch.utils.data.DataLoader(dataset, batch_size=args.train_batch_size, shuffle=True)
    lr_scheduler = get_scheduler(
        args.lr_scheduler, optimizer, num_warmup_steps=args.lr_warmup_steps, num_training_steps=args.max_train_steps
    )
    transformer, optimizer, dataloader, lr_scheduler = accelerator.prepare(
        transformer, optimizer, dataloader, lr_scheduler
    )

    global_step = 0
    progress_bar = tqdm(range(args.max_train_steps), disable=not accelerator.is_local_main_process)
    while global_step < args.max_train_steps:
        for batch in dataloader:
            with accelerator.accumulate(transformer):
                pixel_values = batch["pixel_values"].to(dtype=vae.dtype)
                latents = vae.encode(pixel_values).latent_dist.sample()
                latents = (latents - (vae.config.get("shift_factor") or 0.0)) * vae.config.scaling_factor
                bsz, channels, height, width = latents.shape
                packed = FluxPipeline.pack_latents(latents, bsz, channels, height, width)
                noise = torch.randn_like(packed)
                u = compute_density_for_timestep_sampling(
                    args.weighting_scheme, bsz, args.logit_mean, args.logit_std, args.mode_scale
                )
                indices = (u * noise_scheduler.config.num_train_timesteps).long()
                timesteps = noise_scheduler.timesteps[indices].to(device=packed.device)
                sigmas = get_sigmas(
                    noise_scheduler, timesteps, n_dim=packed.ndim, dtype=packed.dtype, device=packed.device
                )
                noisy = (1.0 - sigmas) * packed + sigmas * noise
                prompt_embeds, pooled = encode_prompt(
                    text_encoders, tokenizers, batch["prompts"], args.max_sequence_length, accelerator.device
                )
                guidance = torch.full([bsz], args.guidance_scale, device=packed.device)
                with accelerator.autocast():
                    model_pred = transformer(
                        noisy, prompt_embeds, pooled, timesteps / 1000, guidance=guidance, return_dict=False
                    )[0]
                weighting = compute_loss_weighting_for_flow(args.weighting_scheme, sigmas)
                target = noise - packed
                loss = torch.mean((weighting.float() * (model_pred.float() - target.float()) ** 2).reshape(bsz, -1), 1)
                loss = loss.mean()
                accelerator.backward(loss)  # ok: the transformer is not compiled
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(lora_params, 1.0)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                progress_bar.update(1)
                global_step += 1
            if global_step >= args.max_train_steps:
                break
    if accelerator.is_main_process:
        os.makedirs(args.output_dir, exist_ok=True)
        torch.save(lora_state_dict(unwrap_model(transformer)), os.path.join(args.output_dir, "lora.bin"))
        logger.info(
            "saved %d LoRA tensors after %d steps (%.1f epochs)",
            len(lora_params),
            global_step,
            global_step / max(1, math.ceil(len(dataloader))),
        )
    free_memory()
    accelerator.end_training()


if __name__ == "__main__":
    main(parse_args())
