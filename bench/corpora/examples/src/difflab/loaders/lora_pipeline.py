"""Loading and saving LoRA weights of a pipeline's UNet and text encoder."""

import os

import torch

from ..utils.logging import get_logger
from ..utils.state_dict_utils import convert_state_dict_to_difflab

logger = get_logger(__name__)
LORA_WEIGHT_NAME = "pytorch_lora_weights.bin"


class StableDiffusionLoraLoaderMixin:
    unet_name = "unet"
    text_encoder_name = "text_encoder"

    @classmethod
    def lora_state_dict(cls, folder, weight_name=None):
        path = os.path.join(folder, weight_name or LORA_WEIGHT_NAME)
        state_dict = torch.load(path, map_location="cpu", weights_only=True)
        return convert_state_dict_to_difflab(state_dict)

    def load_lora_weights(self, folder, weight_name=None, adapter_name=None):
        state_dict = self.lora_state_dict(folder, weight_name)
        for prefix in (self.unet_name, self.text_encoder_name):
            module = getattr(self, prefix, None)
            if module is None:
                continue
            own = {k[len(prefix) + 1 :]: v for k, v in state_dict.items() if k.startswith(prefix + ".")}
            missing, unexpected = module.load_state_dict(own, strict=False)
            logger.info(
                "%s: loaded %d LoRA tensors (%d unexpected)", prefix, len(own) - len(unexpected), len(unexpected)
            )

    @classmethod
    def save_lora_weights(
        cls,
        save_directory,
        unet_lora_layers=None,
        text_encoder_lora_layers=None,
        is_main_process=True,
        weight_name=None,
        save_function=None,
    ):
        if not is_main_process:
            return
        state_dict = {}
        for prefix, layers in ((cls.unet_name, unet_lora_layers), (cls.text_encoder_name, text_encoder_lora_layers)):
            for key, value in (layers or {}).items():
                state_dict[f"{prefix}.{key}"] = value
        os.makedirs(save_directory, exist_ok=True)
        (save_function or torch.save)(state_dict, os.path.join(save_directory, weight_name or LORA_WEIGHT_NAME))

    def unload_lora_weights(self):
        for name in (self.unet_name, self.text_encoder_name):
            module = getattr(self, name, None)
            for sub in module.modules() if module is not None else ():
                if hasattr(sub, "lora_layer"):
                    sub.lora_layer = None
