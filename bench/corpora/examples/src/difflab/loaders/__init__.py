from .lora_pipeline import StableDiffusionLoraLoaderMixin
from .textual_inversion import TextualInversionLoaderMixin

__all__ = ["StableDiffusionLoraLoaderMixin", "TextualInversionLoaderMixin"]
