"""Experiment dino (eager)."""
