from .controlnet import ControlNetModel, ControlNetOutput

__all__ = ["ControlNetModel", "ControlNetOutput"]
