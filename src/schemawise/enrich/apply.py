"""Metadata into the graph (relationships become edges) and into the schema cards."""

from __future__ import annotations

from schemawise.enrich.metadata import Join, Metadata
from schemawise.graph import cardinality
from schemawise.graph.model import Edge, Evidence, Problem, SchemaGraph, Table


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


def apply_overlay_joins(graph: SchemaGraph, meta: Metadata) -> tuple[int, int]:
    """The overlay's word on joins: `not_joins` takes those joins out of the graph (whatever
    found them), `joins` puts them in as `overlay` edges, in place of a join the graph already
    has between the same columns. A join naming a table or column the graph lacks is left out
    and said in the graph's problems. Returns (joins added, joins taken out)."""
    removed = 0
    for denied in meta.not_joins:
        edge = _edge_of(graph, denied)
        if edge is None:
            continue
        kept = [e for e in graph.edges if _same_join(e, edge)]
        graph.edges = [e for e in graph.edges if not _same_join(e, edge)]
        removed += len(kept)
    added = 0
    for stated in meta.joins:
        edge = _edge_of(graph, stated)
        if edge is None:
            continue
        graph.edges = [e for e in graph.edges if not _same_join(e, edge)]
        cardinality.assign(edge, graph, None)
        graph.edges.append(edge)
        added += 1
    if added or removed:
        graph.version = graph.compute_version()
    return added, removed


def _edge_of(graph: SchemaGraph, join: Join) -> Edge | None:
    child, parent = _table(graph, join.child_table), _table(graph, join.parent_table)
    if child is None or parent is None:
        sides = ((join.child_table, child), (join.parent_table, parent))
        missing = ", ".join(name for name, table in sides if table is None)
        _problem(graph, join, f"no table {missing} in the graph")
        return None
    child_columns = [child.column(c) for c in join.child_columns]
    parent_columns = [parent.column(c) for c in join.parent_columns]
    absent = [
        f"{t.name}.{c}"
        for t, names, found in ((child, join.child_columns, child_columns),
                                (parent, join.parent_columns, parent_columns))
        for c, col in zip(names, found, strict=True)
        if col is None
    ]  # fmt: skip
    if absent:
        _problem(graph, join, f"no column {', '.join(absent)}")
        return None
    return Edge(
        child_table=child.name,
        child_columns=[c.name for c in child_columns if c is not None],
        parent_table=parent.name,
        parent_columns=[c.name for c in parent_columns if c is not None],
        source="overlay",
        confidence=1.0,
        evidence=Evidence(rule="stated in the overlay"),
    )


def _table(graph: SchemaGraph, name: str) -> Table | None:
    """By full name, else by bare name when only one table has it (`planes` for `main.planes`)."""
    found = graph.table(name)
    if found is not None:
        return found
    lowered = name.lower()
    matches = [
        t for t in graph.tables
        if t.name.lower() == lowered or t.name.rsplit(".", 1)[-1].lower() == lowered
    ]  # fmt: skip
    return matches[0] if len(matches) == 1 else None


def _same_join(edge: Edge, other: Edge) -> bool:
    """The same columns joined, either way round; a bridge through a table is another join."""
    return edge.via is None and edge.unordered_key() == other.unordered_key()


def _problem(graph: SchemaGraph, join: Join, why: str) -> None:
    graph.problems.append(
        Problem(
            stage="overlay",
            message=f"the overlay's join {join.describe()} was left out: {why}",
            hint="Write each side as table.column, with the names the graph shows "
            "(`schemawise graph URL`).",
        )
    )


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
