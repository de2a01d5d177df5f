from .pipeline_ddpm import DDPMPipeline

__all__ = ["DDPMPipeline"]
