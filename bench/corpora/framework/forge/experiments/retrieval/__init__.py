"""Experiment retrieval (subclass)."""
