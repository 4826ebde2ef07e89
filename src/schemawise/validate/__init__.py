"""Check SQL against the schema graph, refuse what is unsafe, and classify database errors."""
