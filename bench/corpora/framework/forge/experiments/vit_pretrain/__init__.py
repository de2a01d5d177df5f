"""Experiment vit_pretrain (script)."""
