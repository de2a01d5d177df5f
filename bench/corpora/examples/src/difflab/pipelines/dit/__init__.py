from .pipeline_dit import DiTPipeline

__all__ = ["DiTPipeline"]
