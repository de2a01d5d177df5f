"""Experiment long_context (script)."""
