from .unet_2d import UNet2DModel
from .unet_2d_condition import UNet2DConditionModel, UNet2DConditionOutput

__all__ = ["UNet2DConditionModel", "UNet2DConditionOutput", "UNet2DModel"]
