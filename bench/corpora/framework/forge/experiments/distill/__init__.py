"""Experiment distill (script)."""
