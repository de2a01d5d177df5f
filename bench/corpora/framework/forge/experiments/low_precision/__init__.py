"""Experiment low_precision (script)."""
