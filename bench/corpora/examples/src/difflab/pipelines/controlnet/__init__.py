from .pipeline_controlnet import StableDiffusionControlNetPipeline

__all__ = ["StableDiffusionControlNetPipeline"]
