"""Experiment jepa (override)."""
