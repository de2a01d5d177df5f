"""Unconditional sampling in pixel space."""

import torch

from ...utils.torch_utils import randn_tensor
from ..pipeline_utils import DiffusionPipeline, ImagePipelineOutput


class DDPMPipeline(DiffusionPipeline):
    model_cpu_offload_seq = "unet"

    def __init__(self, unet, scheduler):
        super().__init__()
        self.register_modules(unet=unet, scheduler=scheduler)

    @torch.no_grad()
    def __call__(self, batch_size=1, generator=None, num_inference_steps=1000, output_type="pil", return_dict=True):
        size = self.unet.config.get("sample_size", 64)
        channels = self.unet.config.get("in_channels", 3)
        image = randn_tensor(
            (batch_size, channels, size, size), generator=generator, device=self.device, dtype=self.unet.dtype
        )
        self.scheduler.set_timesteps(num_inference_steps)
        for t in self.progress_bar(self.scheduler.timesteps):
            model_output = self.unet(image, t).sample
            image = self.scheduler.step(model_output, t, image, generator=generator).prev_sample
        image = (image / 2 + 0.5).clamp(0, 1).cpu().permute(0, 2, 3, 1).numpy()
        if output_type == "pil":
            image = [(i * 255).round().astype("uint8") for i in image]
        if not return_dict:
            return (image,)
        return ImagePipelineOutput(images=image)
