"""Embeddings and (in a later release) the schema index."""
