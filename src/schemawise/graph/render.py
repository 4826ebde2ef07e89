"""The graph for people: rich tables. JSON output is the model's own dump (see docs/json.md)."""

from __future__ import annotations

from textwrap import shorten

from rich.console import Group
from rich.table import Table as RichTable
from rich.text import Text

from schemawise.graph.model import SchemaGraph
from schemawise.graph.paths import JoinPath
from schemawise.terminal import plain, sanitize

_CARD = {"many_to_one": "N:1", "one_to_one": "1:1", "many_to_many": "N:M"}


def graph_tables(graph: SchemaGraph) -> Group:
    # Names come from the database: plain() keeps them from being read as markup or escapes.
    tables = RichTable(
        title=plain(f"{len(graph.tables)} tables in {graph.source}"), title_justify="left"
    )
    for header in ("table", "kind", "rows", "primary key", "columns"):
        tables.add_column(header, justify="right" if header in ("rows", "columns") else "left")
    for t in graph.tables:
        tables.add_row(
            plain(t.name),
            t.kind,
            "?" if t.row_count is None else f"{t.row_count:,}",
            plain(", ".join(t.primary_key) or "—"),
            str(len(t.columns)),
        )
    edges = RichTable(title=f"{len(graph.edges)} edges (child → parent)", title_justify="left")
    for header in ("child", "parent", "card.", "source", "conf.", "card. from", "notes"):
        edges.add_column(header)
    for e in sorted(graph.edges, key=lambda e: (e.child_table, e.parent_table)):
        notes = list(e.evidence.notes)
        if e.via:
            notes.insert(0, f"via {e.via}")
        style = "bold red" if e.cardinality == "many_to_many" else ""
        # A bridge's edge joins the two tables through the bridge, not column to column: its
        # key columns are the bridge's, so they are not printed beside the tables' names.
        child = e.child_table if e.via else f"{e.child_table}({', '.join(e.child_columns)})"
        parent = e.parent_table if e.via else f"{e.parent_table}({', '.join(e.parent_columns)})"
        edges.add_row(
            plain(child),
            plain(parent),
            Text(_CARD[e.cardinality], style=style),
            e.source,
            f"{e.confidence:.2f}",
            e.evidence.cardinality_basis,
            plain(shorten(notes[0], 80, placeholder=" …") if notes else ""),
        )
    parts: list[RichTable | Text] = [tables, edges]
    if graph.problems:
        parts.append(Text("PARTIAL RESULT — problems:", style="bold yellow"))
        for p in graph.problems:
            where = f"{p.table}: " if p.table else ""
            parts.append(Text(sanitize(f"  [{p.stage}] {where}{p.message}\n    hint: {p.hint}")))
    parts.append(Text(f"schema version {graph.version}", style="dim"))
    return Group(*parts)


def join_path_text(path: JoinPath) -> Text:
    text = Text()
    text.append("tables: ", style="bold")
    text.append(sanitize(" → ".join(path.tables)) + "\n")
    for edge in path.edges:
        text.append(sanitize(f"  JOIN {edge.condition()}  "))
        style = "bold red" if edge.cardinality == "many_to_many" else "dim"
        text.append(f"[{_CARD[edge.cardinality]}, {edge.source}]\n", style=style)
    text.append("grain: ", style="bold")
    text.append(sanitize(path.grain) + "\n")
    for warning in path.warnings:
        text.append("warning: ", style="bold yellow")
        text.append(sanitize(warning) + "\n")
    return text
