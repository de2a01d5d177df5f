from .pipeline_output import StableDiffusionPipelineOutput
from .pipeline_stable_diffusion import StableDiffusionPipeline
from .pipeline_stable_diffusion_img2img import StableDiffusionImg2ImgPipeline

__all__ = ["StableDiffusionImg2ImgPipeline", "StableDiffusionPipeline", "StableDiffusionPipelineOutput"]
