"""Euler steps over Karras sigmas (k-diffusion's sampler)."""

import numpy as np
import torch

from ..configuration_utils import register_to_config
from .scheduling_utils import NoiseScheduleMixin, SchedulerMixin, SchedulerOutput, make_betas


class EulerDiscreteScheduler(SchedulerMixin, NoiseScheduleMixin):
    @register_to_config
    def __init__(
        self,
        num_train_timesteps=1000,
        beta_start=0.00085,
        beta_end=0.012,
        beta_schedule="scaled_linear",
        prediction_type="epsilon",
        use_karras_sigmas=False,
    ):
        self.betas = make_betas(beta_schedule, num_train_timesteps, beta_start, beta_end)
        self.alphas_cumprod = torch.cumprod(1.0 - self.betas, dim=0)
        sigmas = ((1 - self.alphas_cumprod) / self.alphas_cumprod) ** 0.5
        self.sigmas = torch.cat([sigmas.flip(0), torch.zeros(1)])
        self.timesteps = torch.arange(0, num_train_timesteps).flip(0).float()
        self.step_index = None

    @property
    def init_noise_sigma(self):
        return (self.sigmas.max() ** 2 + 1) ** 0.5

    def karras_sigmas(self, sigma_min, sigma_max, steps, rho=7.0):
        ramp = torch.linspace(0, 1, steps)
        min_inv_rho, max_inv_rho = sigma_min ** (1 / rho), sigma_max ** (1 / rho)
        return (max_inv_rho + ramp * (min_inv_rho - max_inv_rho)) ** rho

    def set_timesteps(self, num_inference_steps, device=None):
        timesteps = torch.linspace(0, self.config.num_train_timesteps - 1, num_inference_steps).flip(0)
        sigmas = ((1 - self.alphas_cumprod) / self.alphas_cumprod) ** 0.5
        sigmas = torch.from_numpy(np.interp(timesteps.numpy(), range(len(sigmas)), sigmas.numpy()))
        if self.config.use_karras_sigmas:
            sigmas = self.karras_sigmas(sigmas[-1].item(), sigmas[0].item(), num_inference_steps)
        self.sigmas = torch.cat([sigmas.float(), torch.zeros(1)]).to(device)
        self.timesteps = timesteps.to(device)
        self.step_index = 0

    def scale_model_input(self, sample, timestep):
        sigma = self.sigmas[self.step_index or 0]
        return sample / ((sigma**2 + 1) ** 0.5)

    def step(self, model_output, timestep, sample, generator=None, return_dict=True):
        sigma = self.sigmas[self.step_index]
        if self.config.prediction_type == "epsilon":
            pred_original_sample = sample - sigma * model_output
        elif self.config.prediction_type == "v_prediction":
            pred_original_sample = model_output * (-sigma / (sigma**2 + 1) ** 0.5) + sample / (sigma**2 + 1)
        else:
            raise ValueError(f"unknown prediction_type {self.config.prediction_type}")
        derivative = (sample - pred_original_sample) / sigma
        dt = self.sigmas[self.step_index + 1] - sigma
        prev_sample = sample + derivative * dt
        self.step_index += 1
        if not return_dict:
            return (prev_sample,)
        return SchedulerOutput(prev_sample=prev_sample, pred_original_sample=pred_original_sample)
