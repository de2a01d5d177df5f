"""Class-conditional sampling with a diffusion transformer and a VAE."""

import torch

from ...utils.torch_utils import randn_tensor
from ..pipeline_utils import DiffusionPipeline, ImagePipelineOutput


class DiTPipeline(DiffusionPipeline):
    model_cpu_offload_seq = "transformer->vae"

    def __init__(self, transformer, vae, scheduler, id2label=None):
        super().__init__()
        self.register_modules(transformer=transformer, vae=vae, scheduler=scheduler)
        self.labels = {label: int(index) for index, label in (id2label or {}).items()}

    def get_label_ids(self, labels):
        labels = [labels] if isinstance(labels, str) else labels
        missing = [label for label in labels if label not in self.labels]
        if missing:
            raise ValueError(f"unknown labels {missing}")
        return [self.labels[label] for label in labels]

    @torch.no_grad()
    def __call__(
        self,
        class_labels,
        guidance_scale=4.0,
        generator=None,
        num_inference_steps=50,
        output_type="pil",
        return_dict=True,
    ):
        batch_size = len(class_labels)
        size = self.transformer.config.get("sample_size", 32)
        channels = self.transformer.config.get("in_channels", 4)
        latents = randn_tensor(
            (batch_size, channels, size, size), generator=generator, device=self.device, dtype=self.transformer.dtype
        )
        latent_model_input = torch.cat([latents] * 2) if guidance_scale > 1 else latents
        class_labels = torch.tensor(class_labels, device=self.device).reshape(-1)
        class_null = torch.tensor([1000] * batch_size, device=self.device)
        class_labels_input = torch.cat([class_labels, class_null], 0) if guidance_scale > 1 else class_labels
        self.scheduler.set_timesteps(num_inference_steps)
        for t in self.progress_bar(self.scheduler.timesteps):
            half = latent_model_input[: len(latent_model_input) // 2]
            latent_model_input = torch.cat([half, half], dim=0) if guidance_scale > 1 else latent_model_input
            timesteps = torch.full((latent_model_input.shape[0],), t, device=self.device)
            noise_pred = self.transformer(
                latent_model_input, timestep=timesteps, class_labels=class_labels_input
            ).sample
            if guidance_scale > 1:
                eps, rest = noise_pred[:, :channels], noise_pred[:, channels:]
                cond_eps, uncond_eps = torch.split(eps, len(eps) // 2, dim=0)
                half_eps = uncond_eps + guidance_scale * (cond_eps - uncond_eps)
                noise_pred = torch.cat([torch.cat([half_eps, half_eps], dim=0), rest], dim=1)
            latent_model_input = self.scheduler.step(noise_pred[:, :channels], t, latent_model_input).prev_sample
        latents = latent_model_input.chunk(2, dim=0)[0] if guidance_scale > 1 else latent_model_input
        samples = self.vae.decode(latents / self.vae.config.scaling_factor).sample
        samples = (samples / 2 + 0.5).clamp(0, 1).cpu().permute(0, 2, 3, 1).float().numpy()
        if not return_dict:
            return (samples,)
        return ImagePipelineOutput(images=samples)
