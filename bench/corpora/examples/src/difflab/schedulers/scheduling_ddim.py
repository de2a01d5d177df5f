"""Denoising diffusion implicit models: deterministic sampling with fewer steps."""

import torch

from ..configuration_utils import register_to_config
from .scheduling_utils import NoiseScheduleMixin, SchedulerMixin, SchedulerOutput, make_betas


class DDIMScheduler(SchedulerMixin, NoiseScheduleMixin):
    @register_to_config
    def __init__(
        self,
        num_train_timesteps=1000,
        beta_start=0.00085,
        beta_end=0.012,
        beta_schedule="scaled_linear",
        clip_sample=False,
        set_alpha_to_one=False,
        steps_offset=1,
        prediction_type="epsilon",
        timestep_spacing="leading",
    ):
        self.betas = make_betas(beta_schedule, num_train_timesteps, beta_start, beta_end)
        self.alphas_cumprod = torch.cumprod(1.0 - self.betas, dim=0)
        self.final_alpha_cumprod = torch.tensor(1.0) if set_alpha_to_one else self.alphas_cumprod[0]
        self.timesteps = torch.arange(0, num_train_timesteps).flip(0)
        self.num_inference_steps = None

    def set_timesteps(self, num_inference_steps, device=None):
        self.num_inference_steps = num_inference_steps
        if self.config.timestep_spacing == "trailing":
            steps = torch.arange(
                self.config.num_train_timesteps, 0, -self.config.num_train_timesteps / num_inference_steps
            )
            self.timesteps = (steps.round() - 1).long().to(device)
        else:
            ratio = self.config.num_train_timesteps // num_inference_steps
            self.timesteps = (torch.arange(0, num_inference_steps) * ratio).flip(0).long().to(device)
            self.timesteps += self.config.steps_offset

    def step(self, model_output, timestep, sample, eta=0.0, generator=None, return_dict=True):
        prev_timestep = timestep - self.config.num_train_timesteps // self.num_inference_steps
        alpha_prod_t = self.alphas_cumprod[timestep]
        alpha_prod_t_prev = self.alphas_cumprod[prev_timestep] if prev_timestep >= 0 else self.final_alpha_cumprod
        beta_prod_t = 1 - alpha_prod_t
        if self.config.prediction_type == "epsilon":
            pred_original_sample = (sample - beta_prod_t**0.5 * model_output) / alpha_prod_t**0.5
            pred_epsilon = model_output
        elif self.config.prediction_type == "v_prediction":
            pred_original_sample = alpha_prod_t**0.5 * sample - beta_prod_t**0.5 * model_output
            pred_epsilon = alpha_prod_t**0.5 * model_output + beta_prod_t**0.5 * sample
        else:
            pred_original_sample = model_output
            pred_epsilon = (sample - alpha_prod_t**0.5 * pred_original_sample) / beta_prod_t**0.5
        if self.config.clip_sample:
            pred_original_sample = pred_original_sample.clamp(-1, 1)
        variance = (1 - alpha_prod_t_prev) / (1 - alpha_prod_t) * (1 - alpha_prod_t / alpha_prod_t_prev)
        std_dev_t = eta * variance**0.5
        direction = (1 - alpha_prod_t_prev - std_dev_t**2) ** 0.5 * pred_epsilon
        prev_sample = alpha_prod_t_prev**0.5 * pred_original_sample + direction
        if eta > 0:
            noise = torch.randn(model_output.shape, generator=generator, device=model_output.device)
            prev_sample = prev_sample + std_dev_t * noise
        if not return_dict:
            return (prev_sample,)
        return SchedulerOutput(prev_sample=prev_sample, pred_original_sample=pred_original_sample)
