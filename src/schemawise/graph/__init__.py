"""The schema graph: tables, columns, keys and typed edges with verified cardinality."""
