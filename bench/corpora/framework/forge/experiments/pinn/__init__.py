"""Experiment pinn (forward_ad)."""
