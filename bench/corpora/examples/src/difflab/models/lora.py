"""Low-rank adapters for linear and convolution layers."""

import torch
from torch import nn


class LoRALinearLayer(nn.Module):
    def __init__(self, in_features, out_features, rank=4, network_alpha=None, device=None, dtype=None):
        super().__init__()
        self.down = nn.Linear(in_features, rank, bias=False, device=device, dtype=dtype)
        self.up = nn.Linear(rank, out_features, bias=False, device=device, dtype=dtype)
        self.network_alpha = network_alpha
        self.rank = rank
        nn.init.normal_(self.down.weight, std=1 / rank)
        nn.init.zeros_(self.up.weight)

    def forward(self, hidden_states):
        orig_dtype = hidden_states.dtype
        up_hidden_states = self.up(self.down(hidden_states.to(self.down.weight.dtype)))
        if self.network_alpha is not None:
            up_hidden_states = up_hidden_states * (self.network_alpha / self.rank)
        return up_hidden_states.to(orig_dtype)


class LoRACompatibleLinear(nn.Linear):
    def __init__(self, *args, lora_layer=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lora_layer = lora_layer

    def forward(self, hidden_states, scale=1.0):
        out = super().forward(hidden_states)
        if self.lora_layer is None:
            return out
        return out + scale * self.lora_layer(hidden_states)


def inject_lora(model, rank=4, target_modules=("to_q", "to_k", "to_v", "to_out.0")):
    """Put a LoRA layer beside every targeted linear layer; returns the new trainable parameters."""
    params = []
    for name, module in model.named_modules():
        if not isinstance(module, nn.Linear) or not any(name.endswith(t) for t in target_modules):
            continue
        module.lora_layer = LoRALinearLayer(module.in_features, module.out_features, rank)
        params.extend(module.lora_layer.parameters())
    return params


def lora_state_dict(model):
    return {k: v for k, v in model.state_dict().items() if "lora" in k}


@torch.no_grad()
def fuse_lora(model, scale=1.0):
    for module in model.modules():
        layer = getattr(module, "lora_layer", None)
        if layer is None or not isinstance(module, nn.Linear):
            continue
        delta = layer.up.weight.float() @ layer.down.weight.float()
        if layer.network_alpha is not None:
            delta = delta * layer.network_alpha / layer.rank
        module.weight.data += (scale * delta).to(module.weight.dtype)
        module.lora_layer = None
