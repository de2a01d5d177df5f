"""Experiment diffusion (script)."""
