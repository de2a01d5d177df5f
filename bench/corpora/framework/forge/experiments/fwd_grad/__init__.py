"""Experiment fwd_grad (forward_ad)."""
