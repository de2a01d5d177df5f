"""difflab: diffusion models, noise schedulers and pipelines, with the utilities its training examples share."""

__version__ = "0.9.0"

from .configuration_utils import ConfigMixin
from .models import (
    AutoencoderKL,
    ControlNetModel,
    DiTTransformer2DModel,
    FluxTransformer2DModel,
    ModelMixin,
    UNet2DConditionModel,
    UNet2DModel,
    VQModel,
)
from .optimization import get_scheduler
from .pipelines import (
    DDPMPipeline,
    DiffusionPipeline,
    DiTPipeline,
    FluxPipeline,
    StableDiffusionControlNetPipeline,
    StableDiffusionImg2ImgPipeline,
    StableDiffusionPipeline,
)
from .schedulers import (
    DDIMScheduler,
    DDPMScheduler,
    DPMSolverMultistepScheduler,
    EulerDiscreteScheduler,
    FlowMatchEulerDiscreteScheduler,
    LCMScheduler,
)

__all__ = [
    "AutoencoderKL",
    "ConfigMixin",
    "ControlNetModel",
    "DDIMScheduler",
    "DDPMPipeline",
    "DDPMScheduler",
    "DPMSolverMultistepScheduler",
    "DiTPipeline",
    "DiTTransformer2DModel",
    "DiffusionPipeline",
    "EulerDiscreteScheduler",
    "FlowMatchEulerDiscreteScheduler",
    "FluxPipeline",
    "FluxTransformer2DModel",
    "LCMScheduler",
    "ModelMixin",
    "StableDiffusionControlNetPipeline",
    "StableDiffusionImg2ImgPipeline",
    "StableDiffusionPipeline",
    "UNet2DConditionModel",
    "UNet2DModel",
    "VQModel",
    "get_scheduler",
]
