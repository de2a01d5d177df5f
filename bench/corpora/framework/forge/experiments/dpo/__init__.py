"""Experiment dpo (override)."""
