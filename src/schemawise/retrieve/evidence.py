"""Table evidence: what the index's hits say about each table of each database.

A table's score is its card's score, a share of its best columns' scores and of the path,
example and glossary documents naming it, and small bonuses for being named or having a
column written out; its reasons say which of these it got. Pure: hits and graphs in, plain
dictionaries out.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from schemawise.enrich.metadata import Metadata
from schemawise.graph.model import SchemaGraph
from schemawise.graph.naming import stem
from schemawise.index.cards import TABLE_SEPARATOR
from schemawise.retrieve.settings import RETRIEVAL, ContextSettings, RetrievalSettings
from schemawise.retrieve.words import identifier_words, name_words, names_table, question_words

if TYPE_CHECKING:  # the type only: reading the index is retrieve/reading.py's job
    from schemawise.index.store import Hit

TableKey = tuple[str, str]  # (source, table)


@dataclass(frozen=True)
class TableEvidence:
    """Per (source, table): its score, why, its matched columns with their scores, and whether
    a column of it is written out in the question (pinned: kept while there is room)."""

    scores: dict[TableKey, float]
    reasons: dict[TableKey, list[str]]
    columns: dict[TableKey, list[tuple[str, float]]]
    pinned: set[TableKey]


def table_evidence(
    hits: list[Hit],
    graphs: dict[str, SchemaGraph],
    sources: list[str] | None,
    spelled: set[str],  # names written out (words.written_names)
    asked: set[str],
    settings: ContextSettings,
    tuning: RetrievalSettings = RETRIEVAL,
) -> TableEvidence:
    scores: dict[TableKey, float] = defaultdict(float)
    reasons: dict[TableKey, list[str]] = defaultdict(list)
    column_hits: dict[TableKey, list[tuple[str, float]]] = defaultdict(list)
    shared: dict[TableKey, list[float]] = defaultdict(list)
    for hit in hits:
        key = (hit.source, hit.table)
        if hit.kind == "table":
            scores[key] += hit.score
            reasons[key].append("table card matched")
        elif hit.kind in ("column", "values") and hit.column:
            column_hits[key].append((hit.column, hit.score))
        elif hit.kind in ("path", "example", "glossary"):
            # A document about several tables lends each of them a share of its score.
            for named in hit.table.split(TABLE_SEPARATOR):
                shared[(hit.source, named)].append(hit.score)
                reasons[(hit.source, named)].append(f"{hit.kind} document matched")
        # A source card votes for its database (see source_choice) and names no table.
    for key, lent in shared.items():
        # Hits come best first; `shared_documents` caps how many count, so that a hub named
        # by many join paths does not outweigh one table whose own card matched.
        counted = lent if settings.shared_documents is None else lent[: settings.shared_documents]
        scores[key] += settings.multi_table_weight * sum(counted)
    for key, cols in column_hits.items():
        scores[key] += settings.column_weight * best_distinct(cols, asked, tuning)
        # A column matched by its document and by its values document is named once.
        best = list(dict.fromkeys(c for c, _ in cols))[:3]
        reasons[key].append(f"columns matched: {', '.join(best)}")
    pinned: set[TableKey] = set()
    for source, graph in graphs.items():
        if sources and source not in sources:
            continue
        for table in graph.tables:
            if names_table(table.name, asked):
                scores[(source, table.name)] += settings.name_bonus
                reasons[(source, table.name)].append("named in the question")
        holders_of = graph.cached("column_holders", column_holders) if spelled else {}
        # Sorted: a set's order changes with the process's string hashing, and so did the
        # order of these reasons from one run to the next.
        for column in sorted(spelled & holders_of.keys()):
            holders = holders_of[column]
            if len(holders) <= settings.mention_holders:
                for holder in holders:
                    scores[(source, holder)] += settings.mention_bonus / len(holders)
                    pinned.add((source, holder))
                    reasons[(source, holder)].append(f"column {column} written out")
    return TableEvidence(dict(scores), dict(reasons), dict(column_hits), pinned)


def best_distinct(
    cols: list[tuple[str, float]], asked: set[str], tuning: RetrievalSettings = RETRIEVAL
) -> float:
    """The sum of a table's three best column hits, repeats discounted: a hit that adds
    nothing new — the same column again (its values document), or only question words a
    better column of the table matched (`tokyo_wind` after `reunion_wind`) — counts
    `repeated_column`; a table with ten agencies' wind columns is not three times about wind."""
    seen_columns: set[str] = set()
    seen_words: set[str] = set()
    adjusted = []
    for column, score in sorted(cols, key=lambda c: -c[1]):
        words = identifier_words(column) & asked
        repeat = column in seen_columns or bool(words and words <= seen_words)
        adjusted.append(score * (tuning.repeated_column if repeat else 1.0))
        seen_columns.add(column)
        seen_words |= words
    return sum(sorted(adjusted, reverse=True)[:3])


def table_terms(
    graph: SchemaGraph, meta: Metadata | None, table: str, asked: set[str], matched: list[str]
) -> set[str]:
    """The question words a table accounts for: words of its name and of the other names its
    metadata gives it (dbt, an overlay, a model's description: `InvoiceLine` is a "sale"), of
    its matched columns other than keys (a `shop_id` column names the shop table, not this
    one), and of the values its columns hold (a question about cats needs the table whose
    `pet_type` says `cat`)."""
    keys = graph.cached("key_columns", _key_columns)
    words = set(name_words(table)) | synonym_words(graph, meta, table)
    for column in matched:
        if (table, column) not in keys:
            words |= identifier_words(column)
    if meta is not None and meta.profiles:
        found = graph.table(table)
        for held in found.columns if found else []:
            profile = meta.profiles.get(f"{table}.{held.name}".lower())
            if profile is not None and not profile.free_text:
                for value in profile.values or [*profile.samples, *profile.seen]:
                    words |= question_words(value) & asked
    stems = {stem(w) for w in words}
    return {w for w in asked if stem(w) in stems}


def synonym_words(graph: SchemaGraph, meta: Metadata | None, table: str) -> set[str]:
    """The words of the other names a table's metadata gives it, less any word another table
    is named with: "customer purchase" makes InvoiceLine a purchase, not the customer
    table's rival for "customer"."""
    table_meta = meta.table_meta(table) if meta is not None else None
    if table_meta is None or not table_meta.synonyms:
        return set()
    others = graph.cached("name_words_by_table", _name_words_by_table)
    taken = set().union(*(w for t, w in others.items() if t != table))
    return {
        w for synonym in table_meta.synonyms for w in question_words(synonym)
        if stem(w) not in taken
    }  # fmt: skip


def asked_by_other_name(
    graph: SchemaGraph, meta: Metadata | None, table: str, asked: set[str]
) -> list[str]:
    """The question words only the table's other names account for (the pack's reason)."""
    own = {stem(w) for w in name_words(table)}
    stems = {stem(w) for w in synonym_words(graph, meta, table)} - own
    return sorted(w for w in asked if stem(w) in stems)


def _name_words_by_table(graph: SchemaGraph) -> dict[str, set[str]]:
    """Table → the stems of the words it is named with."""
    return {t.name: {stem(w) for w in name_words(t.name)} for t in graph.tables}


def _key_columns(graph: SchemaGraph) -> set[tuple[str, str]]:
    keys = {(t.name, k) for t in graph.tables for k in t.primary_key}
    keys |= {(e.child_table, c) for e in graph.edges for c in e.child_columns}
    return keys


def column_holders(graph: SchemaGraph) -> dict[str, list[str]]:
    """Column name (lower case) → the tables having a column of that name."""
    holders: dict[str, list[str]] = defaultdict(list)
    for table in graph.tables:
        for column in table.columns:
            holders[column.name.lower()].append(table.name)
    return dict(holders)
