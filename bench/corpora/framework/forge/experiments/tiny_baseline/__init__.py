"""Experiment tiny_baseline (eager)."""
