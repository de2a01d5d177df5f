"""Fine-tune a compiled UNet in float32 and log its input sharpness every few steps.

The sharpness probe (the library's ``jvp_sharpness``) runs the compiled UNet on forward-mode dual
inputs: the compiled call raises or drops the tangent (CAL001, reported in the library where the
call is). Training itself has no autocast.
"""

import argparse
import logging
import os

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from datasets import load_dataset
from torchvision import transforms
from tqdm.auto import tqdm
from transformers import CLIPTextModel, CLIPTokenizer

from difflab import AutoencoderKL, DDPMScheduler, UNet2DConditionModel
from difflab.optimization import get_scheduler
from difflab.training_utils import add_noise_for_training, compile_for_training, jvp_sharpness, set_seed, unwrap_model

logger = logging.getLogger(__name__)

#: The model family this copy of the example trains (the examples folder holds one script per family).
VARIANT = "base"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=f"Fine-tune {VARIANT} and log its input sharpness.")
    parser.add_argument("--pretrained_model_name_or_path", type=str, required=True)
    parser.add_argument("--dataset_name", type=str, required=True)
    parser.add_argument("--output_dir", type=str, default=f"sharpness-{VARIANT}")
    parser.add_argument("--resolution", type=int, default=256)
    parser.add_argument("--train_batch_size", type=int, default=8)
    parser.add_argument("--max_train_steps", type=int, default=2000)
    parser.add_argument("--learning_rate", type=float, default=1e-5)
    parser.add_argument("--lr_scheduler", type=str, default="cosine")
    parser.add_argument("--lr_warmup_steps", type=int, default=100)
    parser.add_argument("--noise_offset", type=float, default=0.0)
    parser.add_argument("--sharpness_every", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def main(args):
    accelerator = Accelerator()
    set_seed(args.seed)
    tokenizer = CLIPTokenizer.from_pretrained(args.pretrained_model_name_or_path, subfolder="tokenizer")
    text_encoder = CLIPTextModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="text_encoder")
    vae = AutoencoderKL.from_pretrained(args.pretrained_model_name_or_path, subfolder="vae")
    noise_scheduler = DDPMScheduler.from_pretrained(args.pretrained_model_name_or_path, subfolder="scheduler")
    unet = UNet2DConditionModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="unet")
    vae.requires_grad_(False)
    text_encoder.requires_grad_(False)
    unet = compile_for_training(unet)
    optimizer = torch.optim.AdamW(unet.parameters(), lr=args.learning_rate)
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
            "input_ids": tokenizer(
                ex["text"], padding="max_length", truncation=True, max_length=77, return_tensors="pt"
            ).input_ids,
        }
    )
    dataloader = torch.utils.data.DataLoader(dataset, batch_size=args.train_batch_size, shuffle=True)
    lr_scheduler = get_scheduler(
        args.lr_scheduler, optimizer, num_warmup_steps=args.lr_warmup_steps, num_training_steps=args.max_train_steps
    )
    optimizer, dataloader, lr_scheduler = accelerator.prepare(optimizer, dataloader, lr_scheduler)
    unet.to(accelerator.device)
    vae.to(accelerator.device)
    text_encoder.to(accelerator.device)

    step = 0
    progress_bar = tqdm(range(args.max_train_steps), disable=not accelerator.is_local_main_process)
    while step < args.max_train_steps:
        for batch in dataloader:
            with torch.no_grad():
                latents = vae.encode(batch["pixel_values"]).latent_dist.sample() * vae.config.scaling_factor
                encoder_hidden_states = text_encoder(batch["input_ids"])[0]
            noise, timesteps, noisy_latents = add_noise_for_training(noise_scheduler, latents, args.noise_offset)
            model_pred = unet(noisy_latents, timesteps, encoder_hidden_states).sample
            loss = F.mse_loss(model_pred.float(), noise.float())
            loss.backward()  # ok: float32, no autocast
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
            step += 1
            progress_bar.update(1)
            if step % args.sharpness_every == 0:
                direction = torch.randn_like(noisy_latents)
                sharpness = jvp_sharpness(unet, noisy_latents, timesteps, encoder_hidden_states, direction)
                accelerator.log({"sharpness": float(sharpness), "loss": loss.item()}, step=step)
            if step >= args.max_train_steps:
                break
    if accelerator.is_main_process:
        os.makedirs(args.output_dir, exist_ok=True)
        unwrap_model(unet).save_pretrained(os.path.join(args.output_dir, "unet"))
    accelerator.end_training()


if __name__ == "__main__":
    main(parse_args())
