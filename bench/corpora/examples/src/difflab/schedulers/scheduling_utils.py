"""What every noise scheduler shares: config, loading, the output type and noise schedules."""

import math
from dataclasses import dataclass
from enum import Enum

import torch

from ..configuration_utils import ConfigMixin
from ..utils.outputs import BaseOutput

SCHEDULER_CONFIG_NAME = "scheduler_config.json"


class KarrasDiffusionSchedulers(Enum):
    DDIMScheduler = 1
    DDPMScheduler = 2
    EulerDiscreteScheduler = 3
    DPMSolverMultistepScheduler = 4
    LCMScheduler = 5


@dataclass
class SchedulerOutput(BaseOutput):
    prev_sample: torch.Tensor = None
    pred_original_sample: torch.Tensor = None


class SchedulerMixin(ConfigMixin):
    config_name = SCHEDULER_CONFIG_NAME
    _compatibles = ()
    order = 1

    @classmethod
    def from_pretrained(cls, folder, subfolder=None, **kwargs):
        return cls.from_config(cls.load_config(folder, subfolder=subfolder), **kwargs)

    def save_pretrained(self, folder):
        self.save_config(folder)

    @property
    def compatibles(self):
        return [cls.name for cls in self._compatibles]


def betas_for_alpha_bar(num_diffusion_timesteps, max_beta=0.999, alpha_transform_type="cosine"):
    if alpha_transform_type == "cosine":

        def alpha_bar_fn(t):
            return math.cos((t + 0.008) / 1.008 * math.pi / 2) ** 2

    elif alpha_transform_type == "exp":

        def alpha_bar_fn(t):
            return math.exp(t * -12.0)

    else:
        raise ValueError(f"unsupported alpha_transform_type {alpha_transform_type}")
    betas = []
    for i in range(num_diffusion_timesteps):
        t1 = i / num_diffusion_timesteps
        t2 = (i + 1) / num_diffusion_timesteps
        betas.append(min(1 - alpha_bar_fn(t2) / alpha_bar_fn(t1), max_beta))
    return torch.tensor(betas, dtype=torch.float32)


def make_betas(beta_schedule, num_train_timesteps, beta_start, beta_end, trained_betas=None):
    if trained_betas is not None:
        return torch.tensor(trained_betas, dtype=torch.float32)
    if beta_schedule == "linear":
        return torch.linspace(beta_start, beta_end, num_train_timesteps, dtype=torch.float32)
    if beta_schedule == "scaled_linear":
        return torch.linspace(beta_start**0.5, beta_end**0.5, num_train_timesteps, dtype=torch.float32) ** 2
    if beta_schedule == "squaredcos_cap_v2":
        return betas_for_alpha_bar(num_train_timesteps)
    raise NotImplementedError(f"{beta_schedule} is not implemented")


def rescale_zero_terminal_snr(betas):
    """Rescale the schedule so that the last timestep has zero signal-to-noise ratio."""
    alphas_bar_sqrt = (1.0 - betas).cumprod(0).sqrt()
    first, last = alphas_bar_sqrt[0].clone(), alphas_bar_sqrt[-1].clone()
    alphas_bar_sqrt = (alphas_bar_sqrt - last) * first / (first - last)
    alphas_bar = alphas_bar_sqrt**2
    alphas = torch.cat([alphas_bar[0:1], alphas_bar[1:] / alphas_bar[:-1]])
    return 1 - alphas


class NoiseScheduleMixin:
    """Forward-process helpers over ``self.alphas_cumprod`` (DDPM-family schedulers)."""

    def add_noise(self, original_samples, noise, timesteps):
        alphas_cumprod = self.alphas_cumprod.to(device=original_samples.device, dtype=original_samples.dtype)
        timesteps = timesteps.to(original_samples.device)
        sqrt_alpha_prod = alphas_cumprod[timesteps] ** 0.5
        sqrt_one_minus_alpha_prod = (1 - alphas_cumprod[timesteps]) ** 0.5
        while sqrt_alpha_prod.dim() < original_samples.dim():
            sqrt_alpha_prod = sqrt_alpha_prod.unsqueeze(-1)
            sqrt_one_minus_alpha_prod = sqrt_one_minus_alpha_prod.unsqueeze(-1)
        return sqrt_alpha_prod * original_samples + sqrt_one_minus_alpha_prod * noise

    def get_velocity(self, sample, noise, timesteps):
        alphas_cumprod = self.alphas_cumprod.to(device=sample.device, dtype=sample.dtype)
        sqrt_alpha_prod = alphas_cumprod[timesteps] ** 0.5
        sqrt_one_minus_alpha_prod = (1 - alphas_cumprod[timesteps]) ** 0.5
        while sqrt_alpha_prod.dim() < sample.dim():
            sqrt_alpha_prod = sqrt_alpha_prod.unsqueeze(-1)
            sqrt_one_minus_alpha_prod = sqrt_one_minus_alpha_prod.unsqueeze(-1)
        return sqrt_alpha_prod * noise - sqrt_one_minus_alpha_prod * sample
