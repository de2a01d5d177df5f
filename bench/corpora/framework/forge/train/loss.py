"""forge: loss builders (the loss may be compiled too).

Module train/loss.py.
"""

import functools

import torch
import torch.nn.functional as F


def cross_entropy_loss(pred, labels):
    return F.cross_entropy(pred.flatten(0, 1).float(), labels.flatten(0, 1), ignore_index=-100)


def mse_loss(pred, target):
    return F.mse_loss(pred.float(), target.float())


def build_cross_entropy_loss(job_config):
    loss_fn = cross_entropy_loss
    if job_config.compile.enable and "loss" in job_config.compile.components:
        loss_fn = torch.compile(loss_fn, backend=job_config.compile.backend)
    return loss_fn


def build_mse_loss(job_config):
    return mse_loss


def rescale_accumulated_loss(unwrapped_loss_fn, accumulation_steps):
    @functools.wraps(unwrapped_loss_fn)
    def accumulated_loss_fn(*args, **kwargs):
        return unwrapped_loss_fn(*args, **kwargs) / accumulation_steps

    return accumulated_loss_fn
