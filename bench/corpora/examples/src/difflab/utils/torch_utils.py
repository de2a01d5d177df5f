"""Small torch helpers shared by models, pipelines and the training examples."""

import torch

from .logging import get_logger

logger = get_logger(__name__)


def is_compiled_module(module):
    """Whether ``module`` is the wrapper ``torch.compile`` returns (its original is ``_orig_mod``)."""
    return hasattr(torch, "_dynamo") and isinstance(module, torch._dynamo.eval_frame.OptimizedModule)


def unwrap_compiled(module):
    return module._orig_mod if is_compiled_module(module) else module


def randn_tensor(shape, generator=None, device=None, dtype=None, layout=None):
    """Noise drawn on the generator's device and moved, so that seeds give the same images on every device."""
    device = torch.device(device or "cpu")
    rand_device = device
    batch_size = shape[0]
    if generator is not None:
        gen_device = generator.device if not isinstance(generator, list) else generator[0].device
        if gen_device.type != device.type and gen_device.type == "cpu":
            rand_device = "cpu"
            if device.type != "mps":
                logger.info("drawing noise on the CPU generator and moving it to %s", device)
    if isinstance(generator, list):
        shape = (1,) + tuple(shape[1:])
        latents = [
            torch.randn(shape, generator=generator[i], device=rand_device, dtype=dtype, layout=layout or torch.strided)
            for i in range(batch_size)
        ]
        return torch.cat(latents, dim=0).to(device)
    return torch.randn(shape, generator=generator, device=rand_device, dtype=dtype, layout=layout or torch.strided).to(
        device
    )


def fourier_filter(x, threshold, scale):
    """Scale the low frequencies of ``x`` (FreeU's backbone filter), computed in float32."""
    dtype = x.dtype
    x = x.float()
    freq = torch.fft.fftshift(torch.fft.fftn(x, dim=(-2, -1)), dim=(-2, -1))
    batch, channels, height, width = freq.shape
    mask = torch.ones((batch, channels, height, width), device=x.device)
    crow, ccol = height // 2, width // 2
    mask[..., crow - threshold : crow + threshold, ccol - threshold : ccol + threshold] = scale
    freq = freq * mask
    out = torch.fft.ifftn(torch.fft.ifftshift(freq, dim=(-2, -1)), dim=(-2, -1)).real
    return out.to(dtype)


def get_device():
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"
