"""A small tabular classifier trainer: data loading, models and the training loop."""
