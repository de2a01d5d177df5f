"""Experiment sft_chat (script)."""
