"""Experiment reward_model (subclass)."""
