"""Image to image: the input image's latents noised to ``strength`` and denoised under the prompt."""

import torch

from ...utils.torch_utils import randn_tensor
from .pipeline_output import StableDiffusionPipelineOutput
from .pipeline_stable_diffusion import StableDiffusionPipeline


class StableDiffusionImg2ImgPipeline(StableDiffusionPipeline):
    def get_timesteps(self, num_inference_steps, strength):
        init_timestep = min(int(num_inference_steps * strength), num_inference_steps)
        start = max(num_inference_steps - init_timestep, 0)
        return self.scheduler.timesteps[start:], num_inference_steps - start

    def prepare_image_latents(self, image, timestep, dtype, device, generator=None):
        image = image.to(device=device, dtype=dtype)
        latents = self.vae.encode(image).latent_dist.sample(generator) * self.vae.config.scaling_factor
        noise = randn_tensor(latents.shape, generator=generator, device=device, dtype=dtype)
        return self.scheduler.add_noise(latents, noise, timestep)

    @torch.no_grad()
    def __call__(
        self,
        prompt,
        image,
        strength=0.8,
        num_inference_steps=50,
        guidance_scale=7.5,
        generator=None,
        output_type="pil",
        return_dict=True,
    ):
        device = self.device
        do_cfg = guidance_scale > 1.0
        prompt_embeds, negative_embeds = self.encode_prompt(prompt, device, 1, do_cfg)
        if do_cfg:
            prompt_embeds = torch.cat([negative_embeds, prompt_embeds])
        image = self.image_processor.preprocess(image)
        self.scheduler.set_timesteps(num_inference_steps, device=device)
        timesteps, num_inference_steps = self.get_timesteps(num_inference_steps, strength)
        latents = self.prepare_image_latents(image, timesteps[:1], prompt_embeds.dtype, device, generator)
        for t in self.progress_bar(timesteps):
            latent_model_input = torch.cat([latents] * 2) if do_cfg else latents
            noise_pred = self.unet(latent_model_input, t, encoder_hidden_states=prompt_embeds).sample
            if do_cfg:
                uncond, text = noise_pred.chunk(2)
                noise_pred = uncond + guidance_scale * (text - uncond)
            latents = self.scheduler.step(noise_pred, t, latents).prev_sample
        image = self.vae.decode(latents / self.vae.config.scaling_factor).sample
        image = self.image_processor.postprocess(image, output_type=output_type)
        if not return_dict:
            return (image, None)
        return StableDiffusionPipelineOutput(images=image)
