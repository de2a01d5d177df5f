"""Experiment flow_match (fp32)."""
