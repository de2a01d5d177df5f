"""Research experiments built on the framework."""
