"""Textual inversion: learn the embedding of a new token from a few images; everything else is frozen.

The frozen UNet is compiled; training runs in float32 without autocast, so the compiled backward (to
the token embedding, through the UNet) and eager agree: nothing is reported.
"""

import argparse
import logging
import os
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from accelerate import Accelerator
from PIL import Image
from torch.utils.data import Dataset
from tqdm.auto import tqdm
from transformers import CLIPTextModel, CLIPTokenizer

from difflab import AutoencoderKL, DDPMScheduler, StableDiffusionPipeline, UNet2DConditionModel
from difflab.optimization import get_scheduler
from difflab.training_utils import compile_for_training, set_seed, unwrap_model

logger = logging.getLogger(__name__)

#: The model family this copy of the example trains (the examples folder holds one script per family).
VARIANT = "base"
IMAGENET_TEMPLATES = [
    "a photo of a {}",
    "a rendering of a {}",
    "a cropped photo of the {}",
    "the photo of a {}",
    "a photo of a clean {}",
    "a dark photo of the {}",
    "a close-up photo of a {}",
    "a bright photo of the {}",
]
IMAGENET_STYLE_TEMPLATES = [
    "a painting in the style of {}",
    "a rendering in the style of {}",
    "a picture in the style of {}",
]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=f"Textual inversion on {VARIANT}.")
    parser.add_argument("--pretrained_model_name_or_path", type=str, required=True)
    parser.add_argument("--train_data_dir", type=str, required=True)
    parser.add_argument("--placeholder_token", type=str, required=True)
    parser.add_argument("--initializer_token", type=str, required=True)
    parser.add_argument("--learnable_property", type=str, default="object", choices=["object", "style"])
    parser.add_argument("--num_vectors", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--output_dir", type=str, default=f"text-inversion-{VARIANT}")
    parser.add_argument("--resolution", type=int, default=512)
    parser.add_argument("--train_batch_size", type=int, default=16)
    parser.add_argument("--max_train_steps", type=int, default=5000)
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--lr_scheduler", type=str, default="constant")
    parser.add_argument("--lr_warmup_steps", type=int, default=500)
    parser.add_argument("--save_steps", type=int, default=500)
    parser.add_argument("--seed", type=int, default=None)
    return parser.parse_args(argv)


class TextualInversionDataset(Dataset):
    def __init__(
        self,
        data_root,
        tokenizer,
        learnable_property="object",
        size=512,
        repeats=100,
        placeholder_token="*",
        flip_p=0.5,
    ):
        self.image_paths = sorted(Path(data_root).iterdir())
        self.tokenizer = tokenizer
        self.size = size
        self.placeholder_token = placeholder_token
        self.flip_p = flip_p
        self.templates = IMAGENET_STYLE_TEMPLATES if learnable_property == "style" else IMAGENET_TEMPLATES
        self._length = len(self.image_paths) * repeats

    def __len__(self):
        return self._length

    def __getitem__(self, i):
        image = Image.open(self.image_paths[i % len(self.image_paths)]).convert("RGB")
        text = random.choice(self.templates).format(self.placeholder_token)
        input_ids = self.tokenizer(
            text, padding="max_length", truncation=True, max_length=self.tokenizer.model_max_length, return_tensors="pt"
        ).input_ids[0]
        image = image.resize((self.size, self.size), resample=Image.Resampling.BICUBIC)
        array = np.array(image).astype(np.float32) / 127.5 - 1.0
        if random.random() < self.flip_p:
            array = array[:, ::-1].copy()
        return {"input_ids": input_ids, "pixel_values": torch.from_numpy(array).permute(2, 0, 1)}


def save_progress(text_encoder, placeholder_token_ids, placeholder_token, path):
    embeds = text_encoder.get_input_embeddings().weight[min(placeholder_token_ids) : max(placeholder_token_ids) + 1]
    torch.save({placeholder_token: embeds.detach().cpu()}, path)


def main(args):
    accelerator = Accelerator()
    if args.seed is not None:
        set_seed(args.seed)
    tokenizer = CLIPTokenizer.from_pretrained(args.pretrained_model_name_or_path, subfolder="tokenizer")
    placeholder_tokens = [args.placeholder_token] + [
        f"{args.placeholder_token}_{i}" for i in range(1, args.num_vectors)
    ]
    if tokenizer.add_tokens(placeholder_tokens) != args.num_vectors:
        raise ValueError(f"The tokenizer already contains {args.placeholder_token}: pick another placeholder.")
    initializer_token_id = tokenizer.encode(args.initializer_token, add_special_tokens=False)[0]
    placeholder_token_ids = tokenizer.convert_tokens_to_ids(placeholder_tokens)
    text_encoder = CLIPTextModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="text_encoder")
    vae = AutoencoderKL.from_pretrained(args.pretrained_model_name_or_path, subfolder="vae")
    unet = UNet2DConditionModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="unet")
    noise_scheduler = DDPMScheduler.from_pretrained(args.pretrained_model_name_or_path, subfolder="scheduler")
    text_encoder.resize_token_embeddings(len(tokenizer))
    token_embeds = text_encoder.get_input_embeddings().weight.data
    with torch.no_grad():
        for token_id in placeholder_token_ids:
            token_embeds[token_id] = token_embeds[initializer_token_id].clone()
    vae.requires_grad_(False)
    unet.requires_grad_(False)
    unet = compile_for_training(unet)
    orig_embeds_params = text_encoder.get_input_embeddings().weight.data.clone()
    optimizer = torch.optim.AdamW(text_encoder.get_input_embeddings().parameters(), lr=args.learning_rate)
    dataset = TextualInversionDataset(
        args.train_data_dir, tokenizer, args.learnable_property, args.resolution, args.repeats, args.placeholder_token
    )
    dataloader = torch.utils.data.DataLoader(dataset, batch_size=args.train_batch_size, shuffle=True)
    lr_scheduler = get_scheduler(
        args.lr_scheduler, optimizer, num_warmup_steps=args.lr_warmup_steps, num_training_steps=args.max_train_steps
    )
    text_encoder, optimizer, dataloader, lr_scheduler = accelerator.prepare(
        text_encoder, optimizer, dataloader, lr_scheduler
    )
    unet.to(accelerator.device)
    vae.to(accelerator.device)

    global_step = 0
    progress_bar = tqdm(range(args.max_train_steps), disable=not accelerator.is_local_main_process)
    while global_step < args.max_train_steps:
        text_encoder.train()
        for batch in dataloader:
            latents = vae.encode(batch["pixel_values"]).latent_dist.sample().detach() * vae.config.scaling_factor
            noise = torch.randn_like(latents)
            timesteps = torch.randint(
                0, noise_scheduler.config.num_train_timesteps, (latents.shape[0],), device=latents.device
            ).long()
            noisy_latents = noise_scheduler.add_noise(latents, noise, timesteps)
            encoder_hidden_states = text_encoder(batch["input_ids"])[0]
            model_pred = unet(noisy_latents, timesteps, encoder_hidden_states).sample
            loss = F.mse_loss(model_pred.float(), noise.float(), reduction="mean")
            accelerator.backward(loss)  # ok: float32, no autocast
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
            index_no_updates = torch.ones((len(tokenizer),), dtype=torch.bool)
            index_no_updates[min(placeholder_token_ids) : max(placeholder_token_ids) + 1] = False
            with torch.no_grad():
                unwrap_model(text_encoder).get_input_embeddings().weight[index_no_updates] = orig_embeds_params[
                    index_no_updates
                ]
            progress_bar.update(1)
            global_step += 1
            if global_step % args.save_steps == 0:
                os.makedirs(args.output_dir, exist_ok=True)
                save_progress(
                    unwrap_model(text_encoder),
                    placeholder_token_ids,
                    args.placeholder_token,
                    os.path.join(args.output_dir, f"learned_embeds-steps-{global_step}.bin"),
                )
            if global_step >= args.max_train_steps:
                break
    if accelerator.is_main_process:
        pipeline = StableDiffusionPipeline.from_pretrained(
            args.pretrained_model_name_or_path,
            text_encoder=unwrap_model(text_encoder),
            vae=vae,
            unet=unwrap_model(unet),
            tokenizer=tokenizer,
        )
        pipeline.save_pretrained(args.output_dir)
    accelerator.end_training()


if __name__ == "__main__":
    main(parse_args())
