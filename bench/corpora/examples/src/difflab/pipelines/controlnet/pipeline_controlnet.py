"""Text to image steered by a ControlNet's residuals (edges, depth, poses)."""

import torch

from ..stable_diffusion.pipeline_output import StableDiffusionPipelineOutput
from ..stable_diffusion.pipeline_stable_diffusion import StableDiffusionPipeline


class StableDiffusionControlNetPipeline(StableDiffusionPipeline):
    def __init__(
        self, vae, text_encoder, tokenizer, unet, controlnet, scheduler, safety_checker=None, feature_extractor=None
    ):
        super().__init__(vae, text_encoder, tokenizer, unet, scheduler, safety_checker, feature_extractor)
        self.register_modules(controlnet=controlnet)

    def prepare_image(self, image, batch_size, device, dtype, do_cfg):
        image = self.image_processor.preprocess(image).to(device=device, dtype=dtype)
        image = image.repeat_interleave(batch_size // image.shape[0], dim=0)
        return torch.cat([image] * 2) if do_cfg else image

    @torch.no_grad()
    def __call__(
        self,
        prompt,
        image,
        num_inference_steps=30,
        guidance_scale=7.5,
        controlnet_conditioning_scale=1.0,
        generator=None,
        output_type="pil",
        return_dict=True,
    ):
        device = self.device
        do_cfg = guidance_scale > 1.0
        prompt_embeds, negative_embeds = self.encode_prompt(prompt, device, 1, do_cfg)
        if do_cfg:
            prompt_embeds = torch.cat([negative_embeds, prompt_embeds])
        control = self.prepare_image(image, 1, device, prompt_embeds.dtype, do_cfg)
        timesteps, _ = self.retrieve_timesteps(self.scheduler, num_inference_steps, device)
        latents = self.prepare_latents(
            1, 4, control.shape[-2], control.shape[-1], prompt_embeds.dtype, device, generator
        )
        for t in self.progress_bar(timesteps):
            latent_model_input = torch.cat([latents] * 2) if do_cfg else latents
            down_samples, mid_sample = self.controlnet(
                latent_model_input,
                t,
                prompt_embeds,
                control,
                conditioning_scale=controlnet_conditioning_scale,
                return_dict=False,
            )
            noise_pred = self.unet(
                latent_model_input,
                t,
                encoder_hidden_states=prompt_embeds,
                down_block_additional_residuals=down_samples,
                mid_block_additional_residual=mid_sample,
            ).sample
            if do_cfg:
                uncond, text = noise_pred.chunk(2)
                noise_pred = uncond + guidance_scale * (text - uncond)
            latents = self.scheduler.step(noise_pred, t, latents).prev_sample
        image = self.vae.decode(latents / self.vae.config.scaling_factor).sample
        image = self.image_processor.postprocess(image, output_type=output_type)
        if not return_dict:
            return (image, None)
        return StableDiffusionPipelineOutput(images=image)
