"""Experiment lora_ft (override)."""
