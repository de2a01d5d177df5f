"""Experiment contrastive (fixed)."""
