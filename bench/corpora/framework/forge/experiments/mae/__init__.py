"""Experiment mae (fp32)."""
