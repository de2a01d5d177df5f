"""DPM-Solver++ (second order, multistep) in data prediction."""

import torch

from ..configuration_utils import register_to_config
from .scheduling_utils import NoiseScheduleMixin, SchedulerMixin, SchedulerOutput, make_betas


class DPMSolverMultistepScheduler(SchedulerMixin, NoiseScheduleMixin):
    order = 2

    @register_to_config
    def __init__(
        self,
        num_train_timesteps=1000,
        beta_start=0.00085,
        beta_end=0.012,
        beta_schedule="scaled_linear",
        solver_order=2,
        prediction_type="epsilon",
        lower_order_final=True,
    ):
        self.betas = make_betas(beta_schedule, num_train_timesteps, beta_start, beta_end)
        self.alphas_cumprod = torch.cumprod(1.0 - self.betas, dim=0)
        self.alpha_t = self.alphas_cumprod.sqrt()
        self.sigma_t = (1 - self.alphas_cumprod).sqrt()
        self.lambda_t = torch.log(self.alpha_t) - torch.log(self.sigma_t)
        self.model_outputs = [None] * solver_order
        self.timesteps = torch.arange(0, num_train_timesteps).flip(0)
        self.lower_order_nums = 0

    def set_timesteps(self, num_inference_steps, device=None):
        steps = torch.linspace(0, self.config.num_train_timesteps - 1, num_inference_steps + 1).round()
        self.timesteps = steps.flip(0)[:-1].long().to(device)
        self.model_outputs = [None] * self.config.solver_order
        self.lower_order_nums = 0

    def convert_model_output(self, model_output, timestep, sample):
        alpha_t, sigma_t = self.alpha_t[timestep], self.sigma_t[timestep]
        if self.config.prediction_type == "epsilon":
            return (sample - sigma_t * model_output) / alpha_t
        if self.config.prediction_type == "v_prediction":
            return alpha_t * sample - sigma_t * model_output
        return model_output

    def step(self, model_output, timestep, sample, return_dict=True):
        index = (self.timesteps == timestep).nonzero()
        step_index = int(index[0]) if len(index) else len(self.timesteps) - 1
        prev_timestep = 0 if step_index == len(self.timesteps) - 1 else self.timesteps[step_index + 1]
        x0 = self.convert_model_output(model_output, timestep, sample)
        self.model_outputs = self.model_outputs[1:] + [x0]
        lambda_t, lambda_s = self.lambda_t[prev_timestep], self.lambda_t[timestep]
        h = lambda_t - lambda_s
        alpha_t, sigma_t, sigma_s = self.alpha_t[prev_timestep], self.sigma_t[prev_timestep], self.sigma_t[timestep]
        if self.lower_order_nums < 1 or self.model_outputs[-2] is None:
            prev_sample = (sigma_t / sigma_s) * sample - alpha_t * (torch.exp(-h) - 1.0) * x0
        else:
            d1 = x0 - self.model_outputs[-2]
            prev_sample = (sigma_t / sigma_s) * sample - alpha_t * (torch.exp(-h) - 1.0) * (x0 + 0.5 * d1)
        self.lower_order_nums = min(self.lower_order_nums + 1, self.config.solver_order)
        if not return_dict:
            return (prev_sample,)
        return SchedulerOutput(prev_sample=prev_sample, pred_original_sample=x0)
