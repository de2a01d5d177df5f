"""Text to image with a latent UNet, a text encoder and classifier-free guidance."""

import torch

from ...image_processor import VaeImageProcessor
from ...loaders.lora_pipeline import StableDiffusionLoraLoaderMixin
from ...loaders.textual_inversion import TextualInversionLoaderMixin
from ...utils.logging import get_logger
from ...utils.torch_utils import randn_tensor
from ..pipeline_utils import DiffusionPipeline
from .pipeline_output import StableDiffusionPipelineOutput

logger = get_logger(__name__)


def rescale_noise_cfg(noise_cfg, noise_pred_text, guidance_rescale=0.0):
    """Rescale the guided prediction towards the text prediction's std (fixes over-exposure with zero-SNR)."""
    std_text = noise_pred_text.std(dim=list(range(1, noise_pred_text.ndim)), keepdim=True)
    std_cfg = noise_cfg.std(dim=list(range(1, noise_cfg.ndim)), keepdim=True)
    rescaled = noise_cfg * (std_text / std_cfg)
    return guidance_rescale * rescaled + (1 - guidance_rescale) * noise_cfg


class StableDiffusionPipeline(DiffusionPipeline, StableDiffusionLoraLoaderMixin, TextualInversionLoaderMixin):
    model_cpu_offload_seq = "text_encoder->unet->vae"
    _optional_components = ("safety_checker", "feature_extractor")

    def __init__(self, vae, text_encoder, tokenizer, unet, scheduler, safety_checker=None, feature_extractor=None):
        super().__init__()
        self.register_modules(
            vae=vae,
            text_encoder=text_encoder,
            tokenizer=tokenizer,
            unet=unet,
            scheduler=scheduler,
            safety_checker=safety_checker,
            feature_extractor=feature_extractor,
        )
        self.vae_scale_factor = 2 ** (len(getattr(vae, "config", {}).get("block_out_channels", (0, 0, 0, 0))) - 1)
        self.image_processor = VaeImageProcessor(vae_scale_factor=self.vae_scale_factor)

    def encode_prompt(self, prompt, device, num_images_per_prompt, do_classifier_free_guidance, negative_prompt=None):
        prompts = [prompt] if isinstance(prompt, str) else list(prompt)
        prompts = self.maybe_convert_prompt(prompts, self.tokenizer)
        ids = self.tokenizer(
            prompts, padding="max_length", max_length=77, truncation=True, return_tensors="pt"
        ).input_ids
        prompt_embeds = self.text_encoder(ids.to(device))[0]
        prompt_embeds = prompt_embeds.repeat_interleave(num_images_per_prompt, dim=0)
        negative_embeds = None
        if do_classifier_free_guidance:
            negatives = [negative_prompt or ""] * len(prompts)
            neg_ids = self.tokenizer(
                negatives, padding="max_length", max_length=77, truncation=True, return_tensors="pt"
            ).input_ids
            negative_embeds = self.text_encoder(neg_ids.to(device))[0].repeat_interleave(num_images_per_prompt, dim=0)
        return prompt_embeds, negative_embeds

    def prepare_latents(self, batch_size, channels, height, width, dtype, device, generator, latents=None):
        shape = (batch_size, channels, height // self.vae_scale_factor, width // self.vae_scale_factor)
        if latents is None:
            latents = randn_tensor(shape, generator=generator, device=device, dtype=dtype)
        else:
            latents = latents.to(device)
        return latents * getattr(self.scheduler, "init_noise_sigma", 1.0)

    def check_inputs(self, prompt, height, width, callback_steps=None):
        if height % 8 != 0 or width % 8 != 0:
            raise ValueError(f"height and width must be divisible by 8, got {height} and {width}")
        if not isinstance(prompt, (str, list)):
            raise ValueError(f"prompt must be a string or a list, got {type(prompt)}")

    @torch.no_grad()
    def __call__(
        self,
        prompt,
        height=512,
        width=512,
        num_inference_steps=50,
        guidance_scale=7.5,
        negative_prompt=None,
        num_images_per_prompt=1,
        generator=None,
        latents=None,
        output_type="pil",
        guidance_rescale=0.0,
        return_dict=True,
    ):
        self.check_inputs(prompt, height, width)
        device = self.device
        batch_size = 1 if isinstance(prompt, str) else len(prompt)
        do_cfg = guidance_scale > 1.0
        prompt_embeds, negative_embeds = self.encode_prompt(
            prompt, device, num_images_per_prompt, do_cfg, negative_prompt
        )
        if do_cfg:
            prompt_embeds = torch.cat([negative_embeds, prompt_embeds])
        timesteps, num_inference_steps = self.retrieve_timesteps(self.scheduler, num_inference_steps, device)
        latents = self.prepare_latents(
            batch_size * num_images_per_prompt, 4, height, width, prompt_embeds.dtype, device, generator, latents
        )
        for t in self.progress_bar(timesteps):
            latent_model_input = torch.cat([latents] * 2) if do_cfg else latents
            if hasattr(self.scheduler, "scale_model_input"):
                latent_model_input = self.scheduler.scale_model_input(latent_model_input, t)
            noise_pred = self.unet(latent_model_input, t, encoder_hidden_states=prompt_embeds, return_dict=False)[0]
            if do_cfg:
                noise_pred_uncond, noise_pred_text = noise_pred.chunk(2)
                noise_pred = noise_pred_uncond + guidance_scale * (noise_pred_text - noise_pred_uncond)
                if guidance_rescale > 0.0:
                    noise_pred = rescale_noise_cfg(noise_pred, noise_pred_text, guidance_rescale)
            latents = self.scheduler.step(noise_pred, t, latents, return_dict=False)[0]
        if output_type == "latent":
            image = latents
        else:
            image = self.vae.decode(latents / self.vae.config.scaling_factor, return_dict=False)[0]
            image = self.image_processor.postprocess(image, output_type=output_type)
        self.maybe_free_model_hooks()
        if not return_dict:
            return (image, None)
        return StableDiffusionPipelineOutput(images=image, nsfw_content_detected=None)
