"""Column pruning for the context pack."""
