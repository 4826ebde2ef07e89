"""Reranking retrieved tables by structure, metadata and use."""
