"""schemawise: a verified schema graph, join paths and guarded SQL for text-to-SQL."""

from schemawise.db import connect
from schemawise.errors import SchemawiseError
from schemawise.graph.extract import extract_graph
from schemawise.graph.model import Column, Edge, SchemaGraph, Table
from schemawise.graph.paths import JoinPath, connecting_tree, shortest_join_path

__version__ = "0.1.0"

__all__ = [
    "Column",
    "Edge",
    "JoinPath",
    "SchemaGraph",
    "SchemawiseError",
    "Table",
    "__version__",
    "connect",
    "connecting_tree",
    "extract_graph",
    "shortest_join_path",
]
