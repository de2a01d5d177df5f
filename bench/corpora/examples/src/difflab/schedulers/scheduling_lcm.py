"""Latent consistency models: a few steps with boundary-condition scalings."""

import torch

from ..configuration_utils import register_to_config
from .scheduling_utils import NoiseScheduleMixin, SchedulerMixin, SchedulerOutput, make_betas


class LCMScheduler(SchedulerMixin, NoiseScheduleMixin):
    @register_to_config
    def __init__(
        self,
        num_train_timesteps=1000,
        beta_start=0.00085,
        beta_end=0.012,
        beta_schedule="scaled_linear",
        original_inference_steps=50,
        timestep_scaling=10.0,
        prediction_type="epsilon",
    ):
        self.betas = make_betas(beta_schedule, num_train_timesteps, beta_start, beta_end)
        self.alphas_cumprod = torch.cumprod(1.0 - self.betas, dim=0)
        self.timesteps = torch.arange(0, num_train_timesteps).flip(0)
        self.step_index = None

    def get_scalings_for_boundary_condition(self, timestep, sigma_data=0.5):
        scaled = timestep * self.config.timestep_scaling
        c_skip = sigma_data**2 / (scaled**2 + sigma_data**2)
        c_out = scaled / (scaled**2 + sigma_data**2) ** 0.5
        return c_skip, c_out

    def set_timesteps(self, num_inference_steps, device=None):
        skipping = self.config.num_train_timesteps // self.config.original_inference_steps
        origin = torch.arange(1, self.config.original_inference_steps + 1) * skipping - 1
        stride = len(origin) // num_inference_steps
        self.timesteps = origin.flip(0)[::stride][:num_inference_steps].to(device)
        self.step_index = 0

    def step(self, model_output, timestep, sample, generator=None, return_dict=True):
        prev_timestep = self.timesteps[self.step_index + 1] if self.step_index + 1 < len(self.timesteps) else timestep
        alpha_prod_t = self.alphas_cumprod[timestep]
        alpha_prod_t_prev = self.alphas_cumprod[prev_timestep]
        c_skip, c_out = self.get_scalings_for_boundary_condition(timestep)
        predicted = (sample - (1 - alpha_prod_t).sqrt() * model_output) / alpha_prod_t.sqrt()
        denoised = c_out * predicted + c_skip * sample
        if self.step_index + 1 < len(self.timesteps):
            noise = torch.randn(model_output.shape, generator=generator, device=model_output.device)
            prev_sample = alpha_prod_t_prev.sqrt() * denoised + (1 - alpha_prod_t_prev).sqrt() * noise
        else:
            prev_sample = denoised
        self.step_index += 1
        if not return_dict:
            return (prev_sample, denoised)
        return SchedulerOutput(prev_sample=prev_sample, pred_original_sample=denoised)
