"""A directional-derivative check of the classifier's logits (forward-mode AD)."""

import torch
import torch.autograd.forward_ad as fwAD


def logit_sensitivity(model, features):
    direction = torch.randn_like(features)
    with fwAD.dual_level():
        logits, _ = model(fwAD.make_dual(features, direction))  # expect: CAL001
        return fwAD.unpack_dual(logits).tangent
