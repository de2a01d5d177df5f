"""Denoising diffusion probabilistic models: ancestral sampling over the trained timesteps."""

import torch

from ..configuration_utils import register_to_config
from ..utils.torch_utils import randn_tensor
from .scheduling_utils import NoiseScheduleMixin, SchedulerMixin, SchedulerOutput, make_betas, rescale_zero_terminal_snr


class DDPMScheduler(SchedulerMixin, NoiseScheduleMixin):
    @register_to_config
    def __init__(
        self,
        num_train_timesteps=1000,
        beta_start=0.0001,
        beta_end=0.02,
        beta_schedule="linear",
        trained_betas=None,
        variance_type="fixed_small",
        clip_sample=True,
        prediction_type="epsilon",
        rescale_betas_zero_snr=False,
    ):
        self.betas = make_betas(beta_schedule, num_train_timesteps, beta_start, beta_end, trained_betas)
        if rescale_betas_zero_snr:
            self.betas = rescale_zero_terminal_snr(self.betas)
        self.alphas = 1.0 - self.betas
        self.alphas_cumprod = torch.cumprod(self.alphas, dim=0)
        self.one = torch.tensor(1.0)
        self.num_inference_steps = None
        self.timesteps = torch.arange(0, num_train_timesteps).flip(0)

    def set_timesteps(self, num_inference_steps, device=None):
        step_ratio = self.config.num_train_timesteps // num_inference_steps
        self.num_inference_steps = num_inference_steps
        self.timesteps = (torch.arange(0, num_inference_steps) * step_ratio).flip(0).to(device)

    def _variance(self, t, prev_t):
        alpha_prod_t = self.alphas_cumprod[t]
        alpha_prod_t_prev = self.alphas_cumprod[prev_t] if prev_t >= 0 else self.one
        current_beta_t = 1 - alpha_prod_t / alpha_prod_t_prev
        variance = (1 - alpha_prod_t_prev) / (1 - alpha_prod_t) * current_beta_t
        variance = torch.clamp(variance, min=1e-20)
        if self.config.variance_type == "fixed_large":
            variance = current_beta_t
        return variance

    def step(self, model_output, timestep, sample, generator=None, return_dict=True):
        t = timestep
        prev_t = t - self.config.num_train_timesteps // (self.num_inference_steps or self.config.num_train_timesteps)
        alpha_prod_t = self.alphas_cumprod[t]
        alpha_prod_t_prev = self.alphas_cumprod[prev_t] if prev_t >= 0 else self.one
        beta_prod_t = 1 - alpha_prod_t
        if self.config.prediction_type == "epsilon":
            pred_original_sample = (sample - beta_prod_t**0.5 * model_output) / alpha_prod_t**0.5
        elif self.config.prediction_type == "sample":
            pred_original_sample = model_output
        elif self.config.prediction_type == "v_prediction":
            pred_original_sample = alpha_prod_t**0.5 * sample - beta_prod_t**0.5 * model_output
        else:
            raise ValueError(f"unknown prediction_type {self.config.prediction_type}")
        if self.config.clip_sample:
            pred_original_sample = pred_original_sample.clamp(-1.0, 1.0)
        current_alpha_t = alpha_prod_t / alpha_prod_t_prev
        coeff_original = (alpha_prod_t_prev**0.5 * (1 - current_alpha_t)) / beta_prod_t
        coeff_current = current_alpha_t**0.5 * (1 - alpha_prod_t_prev) / beta_prod_t
        pred_prev_sample = coeff_original * pred_original_sample + coeff_current * sample
        if t > 0:
            noise = randn_tensor(
                model_output.shape, generator=generator, device=model_output.device, dtype=model_output.dtype
            )
            pred_prev_sample = pred_prev_sample + self._variance(t, prev_t) ** 0.5 * noise
        if not return_dict:
            return (pred_prev_sample,)
        return SchedulerOutput(prev_sample=pred_prev_sample, pred_original_sample=pred_original_sample)
