"""Experiment mup (eager)."""
