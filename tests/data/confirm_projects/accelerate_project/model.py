"""A small image classifier with a cosine-similarity head.

The head normalizes features and class weights in float32 with autocast disabled, as metric-learning
heads do: an fp32 island inside the autocast region.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class CosineHead(nn.Module):
    def __init__(self, features, classes, scale=16.0):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(classes, features) * 0.1)
        self.scale = scale

    def forward(self, x):
        with torch.autocast(device_type=x.device.type, enabled=False):
            x = F.normalize(x.float(), dim=-1)
            w = F.normalize(self.weight.float(), dim=-1)
            return self.scale * x @ w.t()


class SmallConvNet(nn.Module):
    def __init__(self, classes=4, width=16):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1),
            nn.GroupNorm(4, width),
            nn.SiLU(),
            nn.Conv2d(width, width, 3, padding=1, stride=2),
            nn.SiLU(),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.head = CosineHead(width, classes)

    def forward(self, images):
        return self.head(self.features(images))
