import os

CONFIG_NAME = "config.json"
WEIGHTS_NAME = "diffusion_pytorch_model.bin"
SAFETENSORS_WEIGHTS_NAME = "diffusion_pytorch_model.safetensors"
DIFFLAB_CACHE = os.path.expanduser(os.environ.get("DIFFLAB_CACHE", "~/.cache/difflab"))
MIN_PEFT_VERSION = "0.6.0"
DEPRECATED_REVISION_ARGS = ("fp16", "non-ema")
