"""schemawise: a verified schema graph, join paths and guarded SQL for text-to-SQL.

The public names below are imported on first use (PEP 562), so that `schemawise --version`,
`--help` and the sandbox's child process pay only for what they use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "Column": "schemawise.graph.model",
    "Edge": "schemawise.graph.model",
    "SchemaGraph": "schemawise.graph.model",
    "Table": "schemawise.graph.model",
    "JoinPath": "schemawise.graph.paths",
    "connecting_tree": "schemawise.graph.paths",
    "shortest_join_path": "schemawise.graph.paths",
    "SchemawiseError": "schemawise.errors",
    "connect": "schemawise.db",
    "extract_graph": "schemawise.graph.extract",
}

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

if TYPE_CHECKING:
    from schemawise.db import connect
    from schemawise.errors import SchemawiseError
    from schemawise.graph.extract import extract_graph
    from schemawise.graph.model import Column, Edge, SchemaGraph, Table
    from schemawise.graph.paths import JoinPath, connecting_tree, shortest_join_path


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name]), name)
        globals()[name] = value  # once imported, a plain attribute
        return value
    raise AttributeError(f"module 'schemawise' has no attribute {name!r}")
