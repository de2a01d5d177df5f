"""Experiment moe_sweep (subclass)."""
