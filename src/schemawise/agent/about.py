"""Answers about the schema itself, with no SQL: what a column or table means, and how two
tables are related — read from the graph and the metadata (dbt, overlay, profiles)."""

from __future__ import annotations

import re

from schemawise.enrich.metadata import Metadata
from schemawise.errors import NoJoinPathError, TableNotFoundError
from schemawise.graph.model import SchemaGraph
from schemawise.graph.paths import connecting_tree

_NAME = re.compile(r"`([^`]+)`|\"([^\"]+)\"|([A-Za-z_][A-Za-z0-9_.]*)")


def _mentioned(message: str, graph: SchemaGraph) -> tuple[list[str], list[tuple[str, str]]]:
    """Tables and (table, column) pairs the message names, in its order."""
    tables: list[str] = []
    columns: list[tuple[str, str]] = []
    by_name = {t.name.lower(): t.name for t in graph.tables}
    by_short = {t.name.lower().split(".")[-1]: t.name for t in graph.tables}
    for match in _NAME.finditer(message):
        word = next(g for g in match.groups() if g).lower()
        table = by_name.get(word) or by_short.get(word)
        if table is None and word.endswith("s"):
            table = by_short.get(word[:-1])  # "orders" names the table orders or order
        if table is not None and table not in tables:
            tables.append(table)
            continue
        short = word.split(".")[-1]
        for candidate in graph.tables:
            if candidate.column(short) is not None and (candidate.name, short) not in columns:
                columns.append((candidate.name, short))
    return tables, columns


def describe_column(graph: SchemaGraph, meta: Metadata | None, table: str, column: str) -> str:
    entry = graph.table(table)
    col = entry.column(column) if entry else None
    if col is None:
        raise TableNotFoundError(f"No column {table}.{column}.", "List columns with `graph`.")
    lines = [f"{table}.{col.name} ({col.type}{', nullable' if col.nullable else ''})"]
    if col.comment:
        lines.append(f"  comment: {col.comment}")
    table_meta = meta.table_meta(table) if meta else None
    column_meta = table_meta.columns.get(col.name) if table_meta else None
    if column_meta and column_meta.description:
        lines.append(f"  description: {column_meta.description}")
    if column_meta and column_meta.values:
        lines.append("  values: " + ", ".join(f"{k} = {v}" for k, v in column_meta.values.items()))
    profile = meta.profiles.get(f"{table}.{col.name}".lower()) if meta else None
    if profile is not None:
        lines.append(f"  profile: {profile.model_dump(exclude_none=True)}")
    for edge in graph.edges:
        if edge.child_table == table and col.name in edge.child_columns:
            lines.append(f"  refers to {edge.parent_table}.{','.join(edge.parent_columns)} "
                         f"({edge.cardinality}, {edge.source})")  # fmt: skip
    return "\n".join(lines)


def describe_table(graph: SchemaGraph, meta: Metadata | None, table: str) -> str:
    entry = graph.table(table)
    if entry is None:
        raise TableNotFoundError(f"No table {table}.", "List tables with `graph`.")
    lines = [f"{entry.name}: {entry.row_count if entry.row_count is not None else '?'} rows"]
    table_meta = meta.table_meta(table) if meta else None
    for text in (entry.comment, table_meta.description if table_meta else None):
        if text:
            lines.append(f"  {text}")
    if table_meta and table_meta.deprecated:
        lines.append(f"  deprecated: {table_meta.deprecated}")
    lines.append("  columns: " + ", ".join(c.name for c in entry.columns))
    return "\n".join(lines)


def relation(graph: SchemaGraph, tables: list[str]) -> str:
    try:
        return connecting_tree(graph, tables).render()
    except NoJoinPathError as exc:
        return f"{exc.message} {exc.hint}"


def about(message: str, graph: SchemaGraph, meta: Metadata | None) -> str | None:
    """The answer from the schema, or None when the message names nothing in it."""
    tables, columns = _mentioned(message, graph)
    if len(tables) >= 2:
        return relation(graph, tables)
    if columns and (not tables or any(t == tables[0] for t, _ in columns)):
        chosen = [c for c in columns if not tables or c[0] == tables[0]]
        return "\n".join(describe_column(graph, meta, t, c) for t, c in chosen[:3])
    if tables:
        return describe_table(graph, meta, tables[0])
    return None
