"""The pack's columns: the chosen tables' columns pruned in two tiers (prune/), an optional
cheap filter over them, and the values shown beside each (retrieve/values.py)."""

from __future__ import annotations

from typing import Any

from schemawise.enrich.metadata import Metadata
from schemawise.graph.model import Column, SchemaGraph
from schemawise.prune.columns import ColumnPick, PruneInput, join_keys_of, prune
from schemawise.retrieve.pack import ColumnChoice, short_description
from schemawise.retrieve.settings import ContextSettings
from schemawise.retrieve.values import shown_values


def choose_columns(
    question: str,
    text: str,  # question and evidence
    graph: SchemaGraph,
    tables: list[str],
    join_paths: list[dict[str, Any]],
    matched: dict[str, list[tuple[str, float]]],  # table → its column hits
    asked: set[str],
    meta: Metadata | None,
    settings: ContextSettings,
) -> list[ColumnChoice]:
    retrieved = {
        name: [c for c, _ in sorted(matched.get(name, []), key=lambda x: -x[1])] for name in tables
    }
    join_keys = join_keys_of(join_paths)
    picks = prune(PruneInput(graph, tables, text, asked, retrieved, join_keys, meta))
    if settings.column_filter is not None:
        # Keys stay whatever the filter says: without them the joins cannot be written.
        keys = join_keys | {
            (t.name, k) for t in graph.tables if t.name in tables for k in t.primary_key
        }
        kept = settings.column_filter(question, picks)
        picks = [p for p in picks if p in kept or (p.table, p.name) in keys]
    return [_column_choice(p, graph, meta, text) for p in picks]


def _column_choice(
    pick: ColumnPick, graph: SchemaGraph, meta: Metadata | None, text: str
) -> ColumnChoice:
    table = graph.table(pick.table)
    column = table.column(pick.name) if table else None
    profile = meta.profiles.get(f"{pick.table}.{pick.name}".lower()) if meta else None
    return ColumnChoice(
        table=pick.table, name=pick.name, tier=pick.tier, reason=pick.why,
        values=shown_values(profile, column.type if column else "", text),
        description=column_description(meta, pick.table, pick.name, column),
    )  # fmt: skip


def column_description(meta: Metadata | None, table: str, name: str, column: Column | None) -> str:
    """What the team's metadata says the column is, unless its database comment (shown from
    the schema) says the same."""
    described = meta.table_meta(table) if meta is not None else None
    entry = described.columns.get(name) if described else None
    if entry is None and described is not None:
        entry = {k.lower(): v for k, v in described.columns.items()}.get(name.lower())
    text = short_description(entry.description if entry else None)
    comment = short_description(column.comment if column else None)
    return "" if not text or text == comment else text
