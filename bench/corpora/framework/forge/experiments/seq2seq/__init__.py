"""Experiment seq2seq (fp32)."""
