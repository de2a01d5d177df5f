"""Experiment sparse_attn (fixed)."""
