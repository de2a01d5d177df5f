"""The base of every pipeline: its components, moving them, loading and saving, progress and offloading."""

import inspect
import os
from dataclasses import dataclass

import torch

from ..configuration_utils import ConfigMixin
from ..utils.logging import get_logger
from ..utils.outputs import BaseOutput

logger = get_logger(__name__)


@dataclass
class ImagePipelineOutput(BaseOutput):
    images: list = None


class DiffusionPipeline(ConfigMixin):
    config_name = "model_index.json"
    model_cpu_offload_seq = None
    _optional_components = ()

    def register_modules(self, **kwargs):
        for name, module in kwargs.items():
            setattr(self, name, module)
            library = type(module).__module__.split(".")[0] if module is not None else None
            self.register_to_config(**{name: (library, type(module).__name__ if module is not None else None)})

    @property
    def components(self):
        names = inspect.signature(type(self).__init__).parameters
        return {name: getattr(self, name) for name in names if name != "self" and hasattr(self, name)}

    @property
    def device(self):
        for module in self.components.values():
            if isinstance(module, torch.nn.Module):
                return next(module.parameters()).device
        return torch.device("cpu")

    @property
    def dtype(self):
        for module in self.components.values():
            if isinstance(module, torch.nn.Module):
                return next(module.parameters()).dtype
        return torch.float32

    def to(self, device=None, dtype=None):
        for module in self.components.values():
            if isinstance(module, torch.nn.Module):
                module.to(device=device, dtype=dtype)
        return self

    def enable_model_cpu_offload(self, device="cuda"):
        self._offload_device = torch.device(device)
        for name, module in self.components.items():
            if isinstance(module, torch.nn.Module):
                module.to("cpu")
                logger.debug("offloaded %s", name)

    def progress_bar(self, iterable=None, total=None):
        config = getattr(self, "_progress_bar_config", {})
        if config.get("disable", False):
            return iterable if iterable is not None else range(total)
        try:
            from tqdm.auto import tqdm
        except ImportError:
            return iterable if iterable is not None else range(total)
        return tqdm(iterable, total=total, **config)

    def set_progress_bar_config(self, **kwargs):
        self._progress_bar_config = kwargs

    def save_pretrained(self, folder):
        os.makedirs(folder, exist_ok=True)
        self.save_config(folder)
        for name, module in self.components.items():
            if hasattr(module, "save_pretrained"):
                module.save_pretrained(os.path.join(folder, name))

    @classmethod
    def from_pretrained(cls, folder, torch_dtype=None, **kwargs):
        config = cls.load_config(folder)
        expected = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
        components = {}
        for name in expected:
            if name in kwargs:
                components[name] = kwargs.pop(name)
                continue
            library, class_name = config.get(name, (None, None))
            if class_name is None:
                components[name] = None
                continue
            from .. import models, schedulers

            owner = getattr(models, class_name, None) or getattr(schedulers, class_name, None)
            if owner is None:
                raise ValueError(f"{cls.__name__}: cannot load {name} ({library}.{class_name})")
            components[name] = owner.from_pretrained(folder, subfolder=name)
        pipeline = cls(**components)
        if torch_dtype is not None:
            pipeline.to(dtype=torch_dtype)
        return pipeline

    def maybe_free_model_hooks(self):
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def retrieve_timesteps(self, scheduler, num_inference_steps, device, **kwargs):
        accepts = set(inspect.signature(scheduler.set_timesteps).parameters)
        scheduler.set_timesteps(num_inference_steps, device=device, **{k: v for k, v in kwargs.items() if k in accepts})
        return scheduler.timesteps, len(scheduler.timesteps)
