"""Which tables a view reads, from its definition (parsed with sqlglot)."""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from schemawise.graph.model import SchemaGraph, Table


def tables_read(definition: str, dialect: str) -> list[str]:
    """Table names a view definition reads, each once, CTE names excluded."""
    try:
        tree = sqlglot.parse_one(definition, read=dialect)
    except (SqlglotError, RecursionError):
        return []
    if isinstance(tree, exp.Create) and tree.expression is not None:
        tree = tree.expression
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    names: list[str] = []
    for table in tree.find_all(exp.Table):
        if not table.name or (not table.db and table.name.lower() in ctes):
            continue
        name = ".".join(p for p in (table.db, table.name) if p)
        if name not in names:
            names.append(name)
    return names


def resolve_reads(view: Table, definition: str, graph: SchemaGraph, dialect: str) -> list[str]:
    """Graph names of the tables `view` reads; an unqualified name is tried in the view's schema."""
    schema = view.name.rsplit(".", 1)[0] if "." in view.name else None
    resolved: list[str] = []
    for name in tables_read(definition, dialect):
        table = graph.table(name)
        if table is None and schema and "." not in name:
            table = graph.table(f"{schema}.{name}")
        if table is not None and table.name != view.name and table.name not in resolved:
            resolved.append(table.name)
    return resolved
