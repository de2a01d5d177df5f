"""forge: default values shared by the presets.

Module config/defaults.py.
"""

DEFAULT_LR = 3e-4
DEFAULT_WARMUP = 200
DEFAULT_SEQ_LEN = 2048
DEFAULT_DTYPE = "bfloat16"
DTYPE_NAMES = ("float32", "bfloat16", "float16")


def default_dump_folder(name):
    return f"./outputs/{name}"
