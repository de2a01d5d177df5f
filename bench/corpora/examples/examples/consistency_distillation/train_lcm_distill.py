"""Latent consistency distillation: a student UNet learns to jump to the teacher's ODE solution.

The frozen teacher is compiled and runs under autocast inside ``torch.no_grad()``; the student runs
eagerly. The loss's backward only goes through the student: nothing is reported.
"""

import argparse
import copy
import logging
import math
import os

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from datasets import load_dataset
from torchvision import transforms
from tqdm.auto import tqdm
from transformers import AutoTokenizer, CLIPTextModel

from difflab import AutoencoderKL, DDIMScheduler, LCMScheduler, UNet2DConditionModel
from difflab.optimization import get_scheduler
from difflab.training_utils import autocast_for, compile_for_training, set_seed, unwrap_model, weight_dtype_for

logger = logging.getLogger(__name__)

#: The model family this copy of the example trains (the examples folder holds one script per family).
VARIANT = "base"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=f"Consistency distillation of {VARIANT}.")
    parser.add_argument("--pretrained_teacher_model", type=str, required=True)
    parser.add_argument("--dataset_name", type=str, required=True)
    parser.add_argument("--output_dir", type=str, default=f"lcm-{VARIANT}")
    parser.add_argument("--resolution", type=int, default=512)
    parser.add_argument("--train_batch_size", type=int, default=16)
    parser.add_argument("--max_train_steps", type=int, default=10000)
    parser.add_argument("--learning_rate", type=float, default=1e-6)
    parser.add_argument("--lr_scheduler", type=str, default="constant")
    parser.add_argument("--lr_warmup_steps", type=int, default=500)
    parser.add_argument("--num_ddim_timesteps", type=int, default=50)
    parser.add_argument("--w_min", type=float, default=5.0)
    parser.add_argument("--w_max", type=float, default=15.0)
    parser.add_argument("--ema_decay", type=float, default=0.95)
    parser.add_argument("--loss_type", type=str, default="l2", choices=["l2", "huber"])
    parser.add_argument("--huber_c", type=float, default=0.001)
    parser.add_argument("--mixed_precision", type=str, default="fp16", choices=["no", "fp16", "bf16"])
    parser.add_argument("--seed", type=int, default=None)
    return parser.parse_args(argv)


def guidance_scale_embedding(w, embedding_dim=512, dtype=torch.float32):
    w = w * 1000.0
    half_dim = embedding_dim // 2
    emb = torch.log(torch.tensor(10000.0)) / (half_dim - 1)
    emb = torch.exp(torch.arange(half_dim, dtype=dtype) * -emb)
    emb = w.to(dtype)[:, None] * emb[None, :]
    return torch.cat([torch.sin(emb), torch.cos(emb)], dim=1)


def scalings_for_boundary_conditions(timestep, sigma_data=0.5, timestep_scaling=10.0):
    scaled = timestep_scaling * timestep
    c_skip = sigma_data**2 / (scaled**2 + sigma_data**2)
    c_out = scaled / (scaled**2 + sigma_data**2) ** 0.5
    return c_skip, c_out


def predicted_origin(model_output, timesteps, sample, alphas, sigmas):
    alphas = alphas[timesteps].view(-1, 1, 1, 1)
    sigmas = sigmas[timesteps].view(-1, 1, 1, 1)
    return (sample - sigmas * model_output) / alphas


class DDIMSolver:
    def __init__(self, alpha_cumprods, timesteps=1000, ddim_timesteps=50):
        step_ratio = timesteps // ddim_timesteps
        self.ddim_timesteps = (torch.arange(1, ddim_timesteps + 1) * step_ratio).long() - 1
        self.ddim_alpha_cumprods = alpha_cumprods[self.ddim_timesteps]
        self.ddim_alpha_cumprods_prev = torch.cat([alpha_cumprods[:1], alpha_cumprods[self.ddim_timesteps[:-1]]])

    def to(self, device):
        self.ddim_timesteps = self.ddim_timesteps.to(device)
        self.ddim_alpha_cumprods = self.ddim_alpha_cumprods.to(device)
        self.ddim_alpha_cumprods_prev = self.ddim_alpha_cumprods_prev.to(device)
        return self

    def ddim_step(self, pred_x0, pred_noise, timestep_index):
        alpha_cumprod_prev = self.ddim_alpha_cumprods_prev[timestep_index].view(-1, 1, 1, 1)
        return alpha_cumprod_prev.sqrt() * pred_x0 + (1.0 - alpha_cumprod_prev).sqrt() * pred_noise


@torch.no_grad()
def update_ema(target_params, source_params, rate=0.99):
    for targ, src in zip(target_params, source_params):
        targ.detach().mul_(rate).add_(src, alpha=1 - rate)


def main(args):
    accelerator = Accelerator()
    if args.seed is not None:
        set_seed(args.seed)
    noise_scheduler = DDIMScheduler.from_pretrained(args.pretrained_teacher_model, subfolder="scheduler")
    alpha_schedule = torch.sqrt(noise_scheduler.alphas_cumprod)
    sigma_schedule = torch.sqrt(1 - noise_scheduler.alphas_cumprod)
    solver = DDIMSolver(noise_scheduler.alphas_cumprod, ddim_timesteps=args.num_ddim_timesteps)
    tokenizer = AutoTokenizer.from_pretrained(args.pretrained_teacher_model, subfolder="tokenizer")
    text_encoder = CLIPTextModel.from_pretrained(args.pretrained_teacher_model, subfolder="text_encoder")
    vae = AutoencoderKL.from_pretrained(args.pretrained_teacher_model, subfolder="vae")
    teacher_unet = UNet2DConditionModel.from_pretrained(args.pretrained_teacher_model, subfolder="unet")
    for frozen in (vae, text_encoder, teacher_unet):
        frozen.requires_grad_(False)
    unet = UNet2DConditionModel(time_cond_proj_dim=512)
    unet.load_state_dict(teacher_unet.state_dict(), strict=False)
    target_unet = copy.deepcopy(unet).requires_grad_(False)
    teacher_unet = compile_for_training(teacher_unet, mode="reduce-overhead")

    weight_dtype = weight_dtype_for(args.mixed_precision)
    for module in (vae, text_encoder, teacher_unet):
        module.to(accelerator.device, dtype=weight_dtype)
    solver = solver.to(accelerator.device)
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
    unet, optimizer, dataloader, lr_scheduler = accelerator.prepare(unet, optimizer, dataloader, lr_scheduler)
    target_unet.to(accelerator.device)

    global_step = 0
    progress_bar = tqdm(range(args.max_train_steps), disable=not accelerator.is_local_main_process)
    while global_step < args.max_train_steps:
        for batch in dataloader:
            latents = (
                vae.encode(batch["pixel_values"].to(weight_dtype)).latent_dist.sample() * vae.config.scaling_factor
            )
            encoder_hidden_states = text_encoder(batch["input_ids"])[0]
            bsz = latents.shape[0]
            index = torch.randint(0, args.num_ddim_timesteps, (bsz,), device=latents.device).long()
            start_timesteps = solver.ddim_timesteps[index]
            timesteps = torch.clamp(
                start_timesteps - noise_scheduler.config.num_train_timesteps // args.num_ddim_timesteps, 0
            )
            c_skip_start, c_out_start = scalings_for_boundary_conditions(start_timesteps)
            c_skip, c_out = scalings_for_boundary_conditions(timesteps)
            noise = torch.randn_like(latents)
            noisy_model_input = noise_scheduler.add_noise(latents, noise, start_timesteps)
            w = (args.w_max - args.w_min) * torch.rand((bsz,)) + args.w_min
            w_embedding = guidance_scale_embedding(w).to(latents.device)
            noise_pred = unet(
                noisy_model_input.float(), start_timesteps, encoder_hidden_states.float(), timestep_cond=w_embedding
            ).sample
            pred_x_0 = predicted_origin(
                noise_pred,
                start_timesteps,
                noisy_model_input,
                alpha_schedule.to(latents.device),
                sigma_schedule.to(latents.device),
            )
            model_pred = c_skip_start.view(-1, 1, 1, 1) * noisy_model_input + c_out_start.view(-1, 1, 1, 1) * pred_x_0
            with torch.no_grad():
                with autocast_for(args.mixed_precision, accelerator.device.type):
                    cond_teacher = teacher_unet(
                        noisy_model_input.to(weight_dtype), start_timesteps, encoder_hidden_states.to(weight_dtype)
                    ).sample
                    teacher_x0 = predicted_origin(
                        cond_teacher,
                        start_timesteps,
                        noisy_model_input,
                        alpha_schedule.to(latents.device),
                        sigma_schedule.to(latents.device),
                    )
                x_prev = solver.ddim_step(teacher_x0, cond_teacher, index)
                target_noise = target_unet(
                    x_prev.float(), timesteps, encoder_hidden_states.float(), timestep_cond=w_embedding
                ).sample
                target_x0 = predicted_origin(
                    target_noise,
                    timesteps,
                    x_prev,
                    alpha_schedule.to(latents.device),
                    sigma_schedule.to(latents.device),
                )
                target = c_skip.view(-1, 1, 1, 1) * x_prev + c_out.view(-1, 1, 1, 1) * target_x0
            if args.loss_type == "l2":
                loss = F.mse_loss(model_pred.float(), target.float(), reduction="mean")
            else:
                loss = torch.mean(
                    torch.sqrt((model_pred.float() - target.float()) ** 2 + args.huber_c**2) - args.huber_c
                )
            accelerator.backward(loss)  # ok: only the eager student is differentiated
            accelerator.clip_grad_norm_(unet.parameters(), 1.0)
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            update_ema(target_unet.parameters(), unet.parameters(), args.ema_decay)
            progress_bar.update(1)
            global_step += 1
            if global_step >= args.max_train_steps:
                break
    if accelerator.is_main_process:
        os.makedirs(args.output_dir, exist_ok=True)
        unwrap_model(unet).save_pretrained(os.path.join(args.output_dir, "unet"))
        LCMScheduler().save_pretrained(os.path.join(args.output_dir, "scheduler"))
        logger.info("distilled %d steps (%.2f epochs)", global_step, global_step / max(1, math.ceil(len(dataloader))))
    accelerator.end_training()


if __name__ == "__main__":
    main(parse_args())
