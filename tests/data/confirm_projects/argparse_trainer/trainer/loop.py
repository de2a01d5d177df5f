"""The training steps."""

import torch
import torch.nn.functional as F

from .data import batches


def warm_up_head(model, features, labels, optimizer, steps, batch_size, amp_dtype, generator):
    """Fit the main head first; the auxiliary head joins in train_epoch."""
    done = 0
    for x, y in batches(features, labels, batch_size, generator):
        with torch.autocast("cpu", dtype=amp_dtype, enabled=amp_dtype is not None):
            logits, _ = model(x)
            loss = F.cross_entropy(logits, y)
        loss.backward()  # expect: CAL002, CAL005
        optimizer.step()
        optimizer.zero_grad()
        done += 1
        if done >= steps:
            return


def train_epoch(model, features, labels, optimizer, batch_size, amp_dtype, aux_weight, generator):
    total = 0.0
    for x, y in batches(features, labels, batch_size, generator):
        with torch.autocast("cpu", dtype=amp_dtype, enabled=amp_dtype is not None):
            logits, aux_logits = model(x)
            loss = F.cross_entropy(logits, y) + aux_weight * F.cross_entropy(aux_logits, y)
        loss.backward()  # expect: CAL002
        optimizer.step()
        optimizer.zero_grad()
        total += loss.item()
    return total


@torch.no_grad()
def evaluate(model, features, labels):
    logits, _ = model(features)
    return (logits.argmax(-1) == labels).float().mean().item()
