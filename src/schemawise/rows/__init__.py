"""Retrieval inside the query: search row contents by meaning and by terms, per tenant."""
