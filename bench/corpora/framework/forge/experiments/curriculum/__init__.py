"""Experiment curriculum (subclass)."""
