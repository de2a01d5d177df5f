from .constants import CONFIG_NAME, WEIGHTS_NAME, DIFFLAB_CACHE
from .import_utils import is_bitsandbytes_available, is_wandb_available, is_xformers_available
from .logging import get_logger
from .outputs import BaseOutput
from .torch_utils import is_compiled_module, randn_tensor


def check_min_version(min_version):
    from .. import __version__

    if tuple(int(p) for p in __version__.split(".")[:2]) < tuple(int(p) for p in min_version.split(".")[:2]):
        raise ImportError(f"this example needs difflab >= {min_version}, found {__version__}")


def make_image_grid(images, rows, cols):
    if len(images) != rows * cols:
        raise ValueError(f"{len(images)} images do not fill a {rows}x{cols} grid")
    return [images[r * cols : (r + 1) * cols] for r in range(rows)]


__all__ = [
    "BaseOutput",
    "CONFIG_NAME",
    "DIFFLAB_CACHE",
    "WEIGHTS_NAME",
    "check_min_version",
    "get_logger",
    "is_bitsandbytes_available",
    "is_compiled_module",
    "is_wandb_available",
    "is_xformers_available",
    "make_image_grid",
    "randn_tensor",
]
