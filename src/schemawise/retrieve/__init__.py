"""Question → context pack: hybrid retrieval, structural rerank, connection, pruning."""
