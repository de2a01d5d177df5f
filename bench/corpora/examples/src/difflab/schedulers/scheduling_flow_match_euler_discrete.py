"""Euler steps of a rectified flow (sigmas from 1 to 0, optionally shifted for high resolutions)."""

import math

import torch

from ..configuration_utils import register_to_config
from .scheduling_utils import SchedulerMixin, SchedulerOutput


class FlowMatchEulerDiscreteScheduler(SchedulerMixin):
    @register_to_config
    def __init__(self, num_train_timesteps=1000, shift=1.0, use_dynamic_shifting=False, base_shift=0.5, max_shift=1.15):
        timesteps = torch.linspace(1, num_train_timesteps, num_train_timesteps, dtype=torch.float32).flip(0)
        sigmas = timesteps / num_train_timesteps
        if not use_dynamic_shifting:
            sigmas = shift * sigmas / (1 + (shift - 1) * sigmas)
        self.timesteps = sigmas * num_train_timesteps
        self.sigmas = sigmas
        self.step_index = None

    def time_shift(self, mu, sigma, t):
        return math.exp(mu) / (math.exp(mu) + (1 / t - 1) ** sigma)

    def set_timesteps(self, num_inference_steps, device=None, mu=None):
        timesteps = torch.linspace(self.timesteps[0], self.timesteps[-1], num_inference_steps)
        sigmas = timesteps / self.config.num_train_timesteps
        if self.config.use_dynamic_shifting and mu is not None:
            sigmas = torch.tensor([self.time_shift(mu, 1.0, s) for s in sigmas.tolist()])
        self.timesteps = (sigmas * self.config.num_train_timesteps).to(device)
        self.sigmas = torch.cat([sigmas, torch.zeros(1)]).to(device)
        self.step_index = 0

    def scale_noise(self, sample, timestep, noise):
        sigma = self.sigmas[(self.timesteps == timestep).nonzero()[0]] if torch.is_tensor(timestep) else timestep
        return sigma * noise + (1.0 - sigma) * sample

    def step(self, model_output, timestep, sample, return_dict=True):
        sample = sample.to(torch.float32)
        dt = self.sigmas[self.step_index + 1] - self.sigmas[self.step_index]
        prev_sample = (sample + dt * model_output).to(model_output.dtype)
        self.step_index += 1
        if not return_dict:
            return (prev_sample,)
        return SchedulerOutput(prev_sample=prev_sample)
