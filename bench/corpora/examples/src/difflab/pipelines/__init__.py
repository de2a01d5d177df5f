from .controlnet import StableDiffusionControlNetPipeline
from .ddpm import DDPMPipeline
from .dit import DiTPipeline
from .flux import FluxPipeline
from .pipeline_utils import DiffusionPipeline, ImagePipelineOutput
from .stable_diffusion import StableDiffusionImg2ImgPipeline, StableDiffusionPipeline

__all__ = [
    "DDPMPipeline",
    "DiTPipeline",
    "DiffusionPipeline",
    "FluxPipeline",
    "ImagePipelineOutput",
    "StableDiffusionControlNetPipeline",
    "StableDiffusionImg2ImgPipeline",
    "StableDiffusionPipeline",
]
