"""Pre- and post-processing of images for the VAE: PIL, numpy and tensors, in [-1, 1] or [0, 1]."""

import numpy as np
import torch
import torch.nn.functional as F


class VaeImageProcessor:
    def __init__(self, vae_scale_factor=8, do_resize=True, do_normalize=True, do_convert_rgb=False):
        self.vae_scale_factor = vae_scale_factor
        self.do_resize = do_resize
        self.do_normalize = do_normalize
        self.do_convert_rgb = do_convert_rgb

    @staticmethod
    def numpy_to_pt(images):
        if images.ndim == 3:
            images = images[..., None]
        return torch.from_numpy(images.transpose(0, 3, 1, 2))

    @staticmethod
    def pt_to_numpy(images):
        return images.cpu().permute(0, 2, 3, 1).float().numpy()

    @staticmethod
    def normalize(images):
        return 2.0 * images - 1.0

    @staticmethod
    def denormalize(images):
        return (images * 0.5 + 0.5).clamp(0, 1)

    def get_default_height_width(self, image, height=None, width=None):
        height = height or image.shape[-2]
        width = width or image.shape[-1]
        return (height // self.vae_scale_factor) * self.vae_scale_factor, (
            width // self.vae_scale_factor
        ) * self.vae_scale_factor

    def resize(self, image, height, width):
        return F.interpolate(image, size=(height, width), mode="bilinear", align_corners=False)

    def preprocess(self, image, height=None, width=None):
        if isinstance(image, np.ndarray):
            image = self.numpy_to_pt(image.astype(np.float32) / 255.0)
        elif isinstance(image, list):
            image = torch.stack([torch.as_tensor(np.asarray(i), dtype=torch.float32) / 255.0 for i in image])
            image = image.permute(0, 3, 1, 2)
        height, width = self.get_default_height_width(image, height, width)
        if self.do_resize:
            image = self.resize(image, height, width)
        if self.do_normalize and image.min() >= 0:
            image = self.normalize(image)
        return image

    def postprocess(self, image, output_type="pil"):
        image = self.denormalize(image) if self.do_normalize else image
        if output_type == "pt":
            return image
        image = self.pt_to_numpy(image)
        if output_type == "np":
            return image
        return [(i * 255).round().astype("uint8") for i in image]
