"""Metadata that changes SQL: descriptions, synonyms, value meanings, from files teams keep."""
