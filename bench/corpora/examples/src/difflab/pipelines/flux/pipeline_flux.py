"""Text to image with a rectified-flow transformer over packed 2x2 latent patches."""

import numpy as np
import torch

from ...utils.torch_utils import randn_tensor
from ..pipeline_utils import DiffusionPipeline, ImagePipelineOutput


def calculate_shift(image_seq_len, base_seq_len=256, max_seq_len=4096, base_shift=0.5, max_shift=1.15):
    slope = (max_shift - base_shift) / (max_seq_len - base_seq_len)
    return image_seq_len * slope + base_shift - slope * base_seq_len


class FluxPipeline(DiffusionPipeline):
    model_cpu_offload_seq = "text_encoder->text_encoder_2->transformer->vae"

    def __init__(self, scheduler, vae, text_encoder, tokenizer, text_encoder_2, tokenizer_2, transformer):
        super().__init__()
        self.register_modules(
            scheduler=scheduler,
            vae=vae,
            text_encoder=text_encoder,
            tokenizer=tokenizer,
            text_encoder_2=text_encoder_2,
            tokenizer_2=tokenizer_2,
            transformer=transformer,
        )
        self.vae_scale_factor = 8

    @staticmethod
    def pack_latents(latents, batch_size, channels, height, width):
        latents = latents.view(batch_size, channels, height // 2, 2, width // 2, 2)
        latents = latents.permute(0, 2, 4, 1, 3, 5)
        return latents.reshape(batch_size, (height // 2) * (width // 2), channels * 4)

    @staticmethod
    def unpack_latents(latents, height, width, vae_scale_factor):
        batch_size, _, channels = latents.shape
        height, width = 2 * (height // (vae_scale_factor * 2)), 2 * (width // (vae_scale_factor * 2))
        latents = latents.view(batch_size, height // 2, width // 2, channels // 4, 2, 2)
        return latents.permute(0, 3, 1, 4, 2, 5).reshape(batch_size, channels // 4, height, width)

    def encode_prompt(self, prompt, device, max_sequence_length=512):
        prompts = [prompt] if isinstance(prompt, str) else list(prompt)
        clip_ids = self.tokenizer(
            prompts, padding="max_length", max_length=77, truncation=True, return_tensors="pt"
        ).input_ids
        pooled = self.text_encoder(clip_ids.to(device), output_hidden_states=False).pooler_output
        t5_ids = self.tokenizer_2(
            prompts, padding="max_length", max_length=max_sequence_length, truncation=True, return_tensors="pt"
        ).input_ids
        prompt_embeds = self.text_encoder_2(t5_ids.to(device), output_hidden_states=False)[0]
        return prompt_embeds, pooled

    @torch.no_grad()
    def __call__(
        self,
        prompt,
        height=1024,
        width=1024,
        num_inference_steps=28,
        guidance_scale=3.5,
        generator=None,
        output_type="pil",
        return_dict=True,
    ):
        device = self.device
        prompt_embeds, pooled = self.encode_prompt(prompt, device)
        batch_size = prompt_embeds.shape[0]
        channels = self.transformer.config.get("in_channels", 64) // 4
        lat_h, lat_w = 2 * (height // 16), 2 * (width // 16)
        latents = randn_tensor(
            (batch_size, channels, lat_h, lat_w), generator=generator, device=device, dtype=prompt_embeds.dtype
        )
        latents = self.pack_latents(latents, batch_size, channels, lat_h, lat_w)
        sigmas = np.linspace(1.0, 1 / num_inference_steps, num_inference_steps)
        mu = calculate_shift(latents.shape[1])
        timesteps, _ = self.retrieve_timesteps(self.scheduler, num_inference_steps, device, sigmas=sigmas, mu=mu)
        guidance = torch.full([batch_size], guidance_scale, device=device, dtype=torch.float32)
        for t in self.progress_bar(timesteps):
            timestep = t.expand(batch_size).to(latents.dtype) / 1000
            noise_pred = self.transformer(
                latents, prompt_embeds, pooled, timestep, guidance=guidance, return_dict=False
            )[0]
            latents = self.scheduler.step(noise_pred, t, latents, return_dict=False)[0]
        latents = self.unpack_latents(latents, height, width, self.vae_scale_factor)
        latents = latents / self.vae.config.scaling_factor + (self.vae.config.get("shift_factor") or 0.0)
        image = self.vae.decode(latents, return_dict=False)[0]
        image = (image / 2 + 0.5).clamp(0, 1)
        if not return_dict:
            return (image,)
        return ImagePipelineOutput(images=image)
