from .pipeline_flux import FluxPipeline

__all__ = ["FluxPipeline"]
