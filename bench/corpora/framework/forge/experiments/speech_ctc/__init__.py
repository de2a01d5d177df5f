"""Experiment speech_ctc (subclass)."""
