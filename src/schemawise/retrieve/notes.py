"""What a database's metadata adds to a pack: the value meanings of its columns, the
definitions and jargon the question touches, the closest example questions (or logged queries
over its tables), and the hint that a small schema could be sent whole."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from schemawise.enrich.metadata import Metadata
from schemawise.graph.model import SchemaGraph
from schemawise.retrieve.pack import ColumnChoice
from schemawise.retrieve.words import question_words


@dataclass(frozen=True)
class Notes:
    value_mappings: dict[str, Any] = field(default_factory=dict)
    definitions: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)


def metadata_notes(
    tables: list[str], columns: list[ColumnChoice], meta: Metadata, asked: set[str]
) -> Notes:
    notes = Notes()
    chosen = set(tables)
    for column in columns:
        table_meta = meta.table_meta(column.table)
        column_meta = table_meta.columns.get(column.name) if table_meta else None
        if column_meta and column_meta.values:
            notes.value_mappings[f"{column.table}.{column.name}"] = column_meta.values
    bare = {name.rsplit(".", 1)[-1].lower() for name in chosen}
    for definition in meta.definitions:
        words = question_words(f"{definition.name} {definition.text}")
        named = bool(question_words(definition.name) & asked)
        about_chosen = any(b in definition.text.lower() for b in bare)
        if named or about_chosen or len(words & asked) >= 2:
            notes.definitions.append(f"{definition.name}: {definition.text}")
    for term, meaning in meta.jargon.items():
        # As definition_tables reads them too: an entry that brings its tables is shown.
        if question_words(term) & asked or _asked_about(term, meaning, asked):
            notes.definitions.append(f"{term}: {meaning}")
    ranked = sorted(meta.examples, key=lambda e: -len(question_words(e.question) & asked))
    for example in ranked[:2]:
        if len(question_words(example.question) & asked) >= 2:
            notes.examples.append(f"-- {example.question}\n{example.sql}")
    # Without a written example, real queries from the log over the chosen tables show how
    # the tables are used (joins, filters, the codes people write).
    if meta.usage is not None:
        for logged in meta.usage.examples_for(list(chosen))[: max(0, 2 - len(notes.examples))]:
            notes.examples.append(f"-- from the query log\n{logged.sql}")
    return notes


def _asked_about(name: str, text: str, asked: set[str]) -> bool:
    """The question asks about this definition: it names the whole term ("net revenue", not
    just "revenue", which "recognized revenue" shares), or shares two words with the term and
    its text together. (Being about a chosen table is not enough here: that adds the
    definition's text, not its tables.)"""
    term = question_words(name)
    return (bool(term) and term <= asked) or len(question_words(f"{name} {text}") & asked) >= 2


def tables_named(graph: SchemaGraph, text: str) -> list[str]:
    """The graph's tables a definition's text names: schema-qualified (`shop.refunds`, also
    inside `shop.refunds.amount_cents`) or by a bare name that no other table shares."""
    lowered = text.lower()
    bare_count = Counter(t.name.rsplit(".", 1)[-1].lower() for t in graph.tables)
    found = []
    for table in graph.tables:
        name = table.name.lower()
        bare = name.rsplit(".", 1)[-1]
        qualified = "." in name and re.search(rf"(?<![\w.]){re.escape(name)}\b", lowered)
        plain = bare_count[bare] == 1 and re.search(rf"(?<![\w.]){re.escape(bare)}\b", lowered)
        if qualified or plain:
            found.append(table.name)
    return found


def definition_tables(graph: SchemaGraph, meta: Metadata, asked: set[str]) -> dict[str, str]:
    """Tables that the definitions and jargon the question asks about name, each with the
    reason it is in the pack: "net revenue" brings `refunds` because its definition subtracts
    them, whatever the words of the question retrieved."""
    entries = [(d.name, d.text) for d in meta.definitions] + list(meta.jargon.items())
    brought: dict[str, str] = {}
    for name, text in entries:
        if _asked_about(name, text, asked):
            for table in tables_named(graph, text):
                brought.setdefault(table, f"named by the definition of {name}")
    return brought


# Up to this size a schema fits most prompts whole: the pack says so.
SMALL_COLUMNS = 300
SMALL_TABLES = 30


def small_schema_note(source: str, graph: SchemaGraph) -> list[str]:
    if (
        sum(len(t.columns) for t in graph.tables) <= SMALL_COLUMNS
        and len(graph.tables) <= SMALL_TABLES
    ):
        return [f"{source} is small ({len(graph.tables)} tables): sending it whole is an option."]
    return []
