"""What the training examples share: seeding, SNR weighting, EMA weights, mixed precision, compilation, probes."""

import contextlib
import copy
import gc
import random

import numpy as np
import torch
import torch.autograd.forward_ad as fwAD

from .models import UNet2DConditionModel
from .pipelines import DiffusionPipeline
from .schedulers import SchedulerMixin
from .utils.logging import get_logger
from .utils.torch_utils import is_compiled_module

logger = get_logger(__name__)

WEIGHT_DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "no": torch.float32}


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def weight_dtype_for(mixed_precision):
    """The dtype of the frozen components (VAE, text encoder) under ``--mixed_precision``."""
    return WEIGHT_DTYPES.get(mixed_precision or "no", torch.float32)


def autocast_for(mixed_precision, device_type="cuda"):
    """The context the trainable model's forward runs in: an autocast for fp16/bf16, nothing otherwise."""
    if mixed_precision in (None, "no"):
        return contextlib.nullcontext()
    return torch.autocast(device_type, dtype=weight_dtype_for(mixed_precision))


def compile_for_training(model, backend="inductor", mode=None, fullgraph=False):
    """``torch.compile`` with the options the examples expose (``--compile_backend``, ``--compile_mode``)."""
    logger.info("compiling %s with %s (mode %s)", type(model).__name__, backend, mode)
    return torch.compile(model, backend=backend, mode=mode, fullgraph=fullgraph)


def unwrap_model(model):
    """The module behind DDP and torch.compile wrappers, for saving and for pipelines."""
    model = getattr(model, "module", model)
    return model._orig_mod if is_compiled_module(model) else model


def compute_snr(noise_scheduler, timesteps):
    """Signal-to-noise ratio of each timestep (Min-SNR weighting, https://arxiv.org/abs/2303.09556)."""
    alphas_cumprod = noise_scheduler.alphas_cumprod
    sqrt_alphas_cumprod = alphas_cumprod**0.5
    sqrt_one_minus_alphas_cumprod = (1.0 - alphas_cumprod) ** 0.5
    alpha = sqrt_alphas_cumprod.to(device=timesteps.device)[timesteps].float()
    sigma = sqrt_one_minus_alphas_cumprod.to(device=timesteps.device)[timesteps].float()
    while alpha.dim() < 1:
        alpha, sigma = alpha[None], sigma[None]
    return (alpha / sigma) ** 2


def min_snr_loss_weights(noise_scheduler, timesteps, snr_gamma):
    snr = compute_snr(noise_scheduler, timesteps)
    weights = torch.stack([snr, snr_gamma * torch.ones_like(timesteps)], dim=1).min(dim=1)[0]
    if noise_scheduler.config.prediction_type == "epsilon":
        return weights / snr
    if noise_scheduler.config.prediction_type == "v_prediction":
        return weights / (snr + 1)
    return weights


def compute_density_for_timestep_sampling(
    weighting_scheme, batch_size, logit_mean=0.0, logit_std=1.0, mode_scale=1.29, device="cpu"
):
    """Where to sample timesteps of a flow-matching model: logit-normal, mode or uniform."""
    if weighting_scheme == "logit_normal":
        u = torch.nn.functional.sigmoid(torch.normal(logit_mean, logit_std, size=(batch_size,), device=device))
    elif weighting_scheme == "mode":
        u = torch.rand(size=(batch_size,), device=device)
        u = 1 - u - mode_scale * (torch.cos(torch.pi * u / 2) ** 2 - 1 + u)
    else:
        u = torch.rand(size=(batch_size,), device=device)
    return u


def compute_loss_weighting_for_flow(weighting_scheme, sigmas):
    if weighting_scheme == "sigma_sqrt":
        return (sigmas**-2.0).float()
    if weighting_scheme == "cosmap":
        bot = 1 - 2 * sigmas + 2 * sigmas**2
        return 2 / (torch.pi * bot)
    return torch.ones_like(sigmas)


def get_sigmas(noise_scheduler, timesteps, n_dim=4, dtype=torch.float32, device="cpu"):
    sigmas = noise_scheduler.sigmas.to(device=device, dtype=dtype)
    schedule_timesteps = noise_scheduler.timesteps.to(device)
    step_indices = [(schedule_timesteps == t).nonzero().item() for t in timesteps.to(device)]
    sigma = sigmas[step_indices].flatten()
    while len(sigma.shape) < n_dim:
        sigma = sigma.unsqueeze(-1)
    return sigma


def cast_training_params(model, dtype=torch.float32):
    """Upcast the trainable parameters (LoRA layers) to ``dtype``; the frozen ones keep theirs."""
    models = model if isinstance(model, list) else [model]
    for m in models:
        for param in m.parameters():
            if param.requires_grad:
                param.data = param.to(dtype)


def unet_lora_state_dict(unet):
    state = {}
    for name, module in unet.named_modules():
        layer = getattr(module, "lora_layer", None)
        if layer is not None:
            for key, value in layer.state_dict().items():
                state[f"{name}.lora.{key}"] = value
    return state


def free_memory():
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def pipeline_for_validation(pipeline_cls, pretrained, unet, weight_dtype, device, **components):
    """A pipeline holding the model being trained (unwrapped), for validation images."""
    pipeline = pipeline_cls.from_pretrained(pretrained, unet=unwrap_model(unet), torch_dtype=weight_dtype, **components)
    if not isinstance(pipeline, DiffusionPipeline):
        raise TypeError(f"{pipeline_cls.__name__} is not a DiffusionPipeline")
    pipeline.set_progress_bar_config(disable=True)
    return pipeline.to(device)


def add_noise_for_training(noise_scheduler, latents, noise_offset=0.0, input_perturbation=0.0):
    """Noise and timesteps for one batch (offset noise and input perturbation as in the examples' options)."""
    if not isinstance(noise_scheduler, SchedulerMixin):
        raise TypeError("noise_scheduler must be a difflab scheduler")
    noise = torch.randn_like(latents)
    if noise_offset:
        noise += noise_offset * torch.randn((latents.shape[0], latents.shape[1], 1, 1), device=latents.device)
    bsz = latents.shape[0]
    timesteps = torch.randint(0, noise_scheduler.config.num_train_timesteps, (bsz,), device=latents.device).long()
    noised_with = noise + input_perturbation * torch.randn_like(noise) if input_perturbation else noise
    return noise, timesteps, noise_scheduler.add_noise(latents, noised_with, timesteps)


def jvp_sharpness(model, sample, timesteps, encoder_hidden_states, direction):
    """How much the model's prediction moves along ``direction`` in input space (a forward-mode JVP),
    logged by the examples with ``--log_sharpness`` as a cheap health check of the run."""
    with fwAD.dual_level():
        dual = fwAD.make_dual(sample, direction)
        out = model(dual, timesteps, encoder_hidden_states).sample  # expect: CAL001
        return fwAD.unpack_dual(out).tangent.float().norm() / direction.float().norm()


class EMAModel:
    """An exponential moving average of a model's parameters, with warmup of the decay."""

    def __init__(
        self,
        parameters,
        decay=0.9999,
        min_decay=0.0,
        update_after_step=0,
        use_ema_warmup=False,
        inv_gamma=1.0,
        power=2 / 3,
        model_cls=None,
        model_config=None,
    ):
        parameters = list(parameters)
        self.shadow_params = [p.clone().detach() for p in parameters]
        self.decay = decay
        self.min_decay = min_decay
        self.update_after_step = update_after_step
        self.use_ema_warmup = use_ema_warmup
        self.inv_gamma = inv_gamma
        self.power = power
        self.optimization_step = 0
        self.model_cls = model_cls or UNet2DConditionModel
        self.model_config = model_config
        self.temp_stored_params = None

    def get_decay(self, optimization_step):
        step = max(0, optimization_step - self.update_after_step - 1)
        if step <= 0:
            return 0.0
        if self.use_ema_warmup:
            value = 1 - (1 + step / self.inv_gamma) ** -self.power
        else:
            value = (1 + step) / (10 + step)
        return max(min(value, self.decay), self.min_decay)

    @torch.no_grad()
    def step(self, parameters):
        self.optimization_step += 1
        decay = self.get_decay(self.optimization_step)
        for s_param, param in zip(self.shadow_params, parameters):
            if param.requires_grad:
                s_param.sub_((1 - decay) * (s_param - param))
            else:
                s_param.copy_(param)

    def copy_to(self, parameters):
        for s_param, param in zip(self.shadow_params, parameters):
            param.data.copy_(s_param.to(param.device).data)

    def store(self, parameters):
        self.temp_stored_params = [param.detach().cpu().clone() for param in parameters]

    def restore(self, parameters):
        if self.temp_stored_params is None:
            raise RuntimeError("restore() called before store()")
        for c_param, param in zip(self.temp_stored_params, parameters):
            param.data.copy_(c_param.data)
        self.temp_stored_params = None

    def to(self, device=None, dtype=None, non_blocking=False):
        self.shadow_params = [
            p.to(device=device, dtype=dtype, non_blocking=non_blocking)
            if p.is_floating_point()
            else p.to(device=device)
            for p in self.shadow_params
        ]

    def state_dict(self):
        return {"decay": self.decay, "optimization_step": self.optimization_step, "shadow_params": self.shadow_params}

    def load_state_dict(self, state_dict):
        state_dict = copy.deepcopy(state_dict)
        self.decay = state_dict.get("decay", self.decay)
        self.optimization_step = state_dict.get("optimization_step", self.optimization_step)
        self.shadow_params = state_dict.get("shadow_params", self.shadow_params)

    def save_pretrained(self, path):
        model = self.model_cls.from_config(self.model_config or {})
        self.copy_to(model.parameters())
        model.save_pretrained(path)
