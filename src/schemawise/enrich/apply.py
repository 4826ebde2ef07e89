"""Metadata into the graph (relationships become edges) and into the schema cards."""

from __future__ import annotations

from schemawise.enrich.metadata import Metadata
from schemawise.graph import cardinality
from schemawise.graph.model import Edge, Evidence, SchemaGraph


def add_relationships(graph: SchemaGraph, meta: Metadata) -> int:
    """dbt `relationships` tests as edges, unless the graph already has that join."""
    taken = {e.unordered_key() for e in graph.edges}
    added = 0
    for rel in meta.relationships:
        child, parent = graph.table(rel.child_table), graph.table(rel.parent_table)
        if child is None or parent is None:
            continue
        child_col, parent_col = child.column(rel.child_column), parent.column(rel.parent_column)
        if child_col is None or parent_col is None:
            continue
        edge = Edge(
            child_table=child.name, child_columns=[child_col.name],
            parent_table=parent.name, parent_columns=[parent_col.name],
            source="dbt_relationship", confidence=0.95,
            evidence=Evidence(rule="dbt relationships test"),
        )  # fmt: skip
        if edge.unordered_key() in taken:
            continue
        unique = {(t.lower(), c.lower()) for t, c in meta.unique}
        cardinality.assign(edge, graph, None)
        if (rel.parent_table.lower(), rel.parent_column.lower()) in unique:
            edge.evidence.notes.append("parent key has a dbt unique test")
        graph.edges.append(edge)
        taken.add(edge.unordered_key())
        added += 1
    if added:
        graph.version = graph.compute_version()
    return added


def about_tables(graph: SchemaGraph, meta: Metadata) -> dict[str, str]:
    """Table (lower case) → description, synonyms, certification or deprecation, for cards."""
    out: dict[str, str] = {}
    for table in graph.tables:
        table_meta = meta.table_meta(table.name)
        if table_meta is None:
            continue
        parts = [table_meta.description or ""]
        if table_meta.synonyms:
            parts.append("also called " + ", ".join(table_meta.synonyms))
        if table_meta.deprecated:
            parts.append(f"DEPRECATED ({table_meta.deprecated})")
        if table_meta.certified:
            parts.append("certified")
        text = "; ".join(p for p in parts if p)
        if text:
            out[table.name.lower()] = text
    return out


def descriptions(graph: SchemaGraph, meta: Metadata) -> dict[str, str]:
    """`table.column` → text for the cards: description, synonyms, value meanings."""
    out: dict[str, str] = {}
    for table in graph.tables:
        table_meta = meta.table_meta(table.name)
        if table_meta is None:
            continue
        for name, column in table_meta.columns.items():
            parts = []
            if column.description:
                parts.append(column.description)
            if column.synonyms:
                parts.append("also called " + ", ".join(column.synonyms))
            if column.values:
                parts.append("values: " + ", ".join(f"{k} = {v}" for k, v in column.values.items()))
            elif column.accepted_values:
                parts.append("one of " + ", ".join(column.accepted_values))
            if parts:
                out[f"{table.name}.{name}".lower()] = "; ".join(parts)
    return out
