"""Column pruning: of the chosen tables, keep only the columns a query could need, in two tiers.

Tier 1 (relevant): the columns retrieval ranked highest for the question, columns written out
in the question or evidence (`convertedManaCost`, `Free Meal Count (K-12)`), columns whose name,
description or synonyms share a word with the question, columns holding a value the question
names, and time columns when the question has a time phrase.
Tier 2 (potentially relevant): primary keys, the keys of every join among the chosen tables,
the columns that name a table's rows (`name`, `title`; `forename` and `surname`), columns the
question implies (a country column for a place it names, an amount for money), and enum-like
low-cardinality columns (a filter on status or type is common and cheap to show).
Deterministic: the same question and index give the same columns. Within a tier, columns the
query log uses more come first.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from schemawise.enrich.metadata import Metadata
from schemawise.graph.model import SchemaGraph, Table
from schemawise.graph.naming import is_time

# Word and value handling comes from the leaf modules of retrieve/ (grammar only); pruning
# never imports the pipeline above it (retrieve/context.py and its stages).
from schemawise.retrieve.implied import PLACE_WORDS
from schemawise.retrieve.values import names_value
from schemawise.retrieve.words import identifier_words, text_words

# Retrieved columns kept per table, and columns kept for sharing words with the question.
RETRIEVED_PER_TABLE = 6
NAMED_PER_TABLE = 12
ENUMS_PER_TABLE = 3

# Columns a question implies without naming them: a place it names is filtered on a country
# or nationality column ("circuits in Italy", "German drivers"), and money it speaks of is an
# amount or a price ("how much did client 617 pay"). Kept in tier 2.
_MONEY_WORDS = frozenset(
    {"pay", "paid", "pays", "paying", "spend", "spent", "spends", "usd", "eur", "dollar",
     "dollars", "euro", "euros", "money"}
)  # fmt: skip
_IMPLIED_COLUMNS: tuple[tuple[frozenset[str], frozenset[str], str], ...] = (
    (PLACE_WORDS, frozenset({"country", "nationality", "nation"}), "a place the question names"),
    (_MONEY_WORDS, frozenset({"amount", "price", "payment"}), "money the question speaks of"),
)

_TIME_PHRASE = re.compile(
    r"\b(19|20)\d\d\b|\b(year|years|month|months|day|days|date|dates|week|weeks|when|time|"
    r"recent|latest|earliest|oldest|newest|before|after|since|during|between|quarter|daily|"
    r"monthly|yearly|annual|hour|hours|january|february|march|april|may|june|july|august|"
    r"september|october|november|december)\b",
    re.IGNORECASE,
)


@dataclass
class ColumnPick:
    table: str
    name: str
    tier: int
    why: str


@dataclass
class PruneInput:
    graph: SchemaGraph
    tables: list[str]
    question: str
    asked: set[str]  # the question's content words, singular
    retrieved: dict[str, list[str]] = field(default_factory=dict)  # table → best first
    join_keys: set[tuple[str, str]] = field(default_factory=set)
    meta: Metadata | None = None


# An optional cheap second pass (an LLM) over the picks; nothing here requires one.
ColumnFilter = Callable[[str, list[ColumnPick]], list[ColumnPick]]


def has_time_phrase(question: str) -> bool:
    return bool(_TIME_PHRASE.search(question))


def _column_text(table: Table, column: str, meta: Metadata | None) -> set[str]:
    """Words of a column's name, and of its description and synonyms when metadata has them."""
    words = identifier_words(column)
    table_meta = meta.table_meta(table.name) if meta else None
    column_meta = table_meta.columns.get(column) if table_meta else None
    if column_meta:
        for text in [column_meta.description or "", *column_meta.synonyms]:
            words |= text_words(text)
    col = table.column(column)
    if col is not None and col.comment:
        words |= text_words(col.comment)
    return words


def _named_values(question: str, values: list[str]) -> bool:
    """The question names one of the column's values (case-insensitive, whole words)."""
    return any(names_value(question, v) for v in values)


def _written_out(question: str, column: str) -> bool:
    """The column's name appears in the text as a whole word or phrase, in any case."""
    if column.lower() not in question.lower():  # cheap test first: tables can be very wide
        return False
    return bool(re.search(rf"(?<![\w]){re.escape(column)}(?![\w])", question, re.IGNORECASE))


def prune(request: PruneInput) -> list[ColumnPick]:
    timely = has_time_phrase(request.question)
    keys = kept_keys(request.graph, request.tables, request.join_keys)
    out: list[ColumnPick] = []
    for name in request.tables:
        table = request.graph.table(name)
        if table is not None:
            out.extend(_table_picks(table, name, request, timely, keys))
    return out


def kept_keys(
    graph: SchemaGraph, tables: list[str], join_keys: set[tuple[str, str]]
) -> set[tuple[str, str]]:
    """The (table, column) keys pruning keeps whatever the question asks: the tables' primary
    keys, the keys of the chosen join path, and those of every join among the tables."""
    keys = join_keys | keys_between(graph, tables)
    for name in tables:
        table = graph.table(name)
        if table is not None:
            keys |= {(name, key) for key in table.primary_key}
    return keys


def keys_between(graph: SchemaGraph, tables: list[str]) -> set[tuple[str, str]]:
    """The key columns of every known join among the tables, not only the chosen path's: the
    query may join them another way (`team_api_id` where the path took `team_fifa_api_id`)."""
    chosen = set(tables)
    keys: set[tuple[str, str]] = set()
    for edge in graph.edges:
        # A many-to-many edge through a bridge is joined by the bridge's own edges.
        if edge.via is None and edge.child_table in chosen and edge.parent_table in chosen:
            keys |= {(edge.child_table, c) for c in edge.child_columns}
            keys |= {(edge.parent_table, c) for c in edge.parent_columns}
    return keys


def _table_picks(
    table: Table, name: str, request: PruneInput, timely: bool, join_keys: set[tuple[str, str]]
) -> list[ColumnPick]:
    meta = request.meta
    usage = meta.usage if meta else None
    profiles = meta.profiles if meta else {}
    picks: dict[str, ColumnPick] = {}

    def used(column: str) -> int:
        return usage.column_count(table.name, column) if usage else 0

    def keep(column: str, tier: int, why: str) -> None:
        if column not in picks or picks[column].tier > tier:
            picks[column] = ColumnPick(table.name, column, tier, why)

    for column_name in request.retrieved.get(name, [])[:RETRIEVED_PER_TABLE]:
        keep(column_name, 1, "retrieved")
    for column in table.columns:
        if _written_out(request.question, column.name):
            keep(column.name, 1, "written out in the question")
    # Columns sharing words with the question: most shared words first, then most used.
    named = []
    for column in table.columns:
        shared = len(_column_text(table, column.name, meta) & request.asked)
        if shared:
            named.append((-shared, -used(column.name), column.name))
    for _, _, column_name in sorted(named)[:NAMED_PER_TABLE]:
        keep(column_name, 1, "shares words with the question")
    enums = []
    for column in table.columns:
        profile = profiles.get(f"{table.name}.{column.name}".lower())
        if profile is not None and profile.free_text:
            profile = None  # comments and descriptions: neither a value to name nor an enum
        values = (profile.values or [*profile.samples, *profile.seen]) if profile else []
        if values and _named_values(request.question, values):
            keep(column.name, 1, "holds a value the question names")
        elif profile and len(profile.values) > 1:
            enums.append(column.name)
        if timely and is_time(column.type, column.name):
            keep(column.name, 1, "time column for a time phrase")
    for key in [*table.primary_key, *[c for t, c in join_keys if t == name]]:
        keep(key, 2, "key")
    for label in _label_columns(table):
        keep(label, 2, "names the rows")
    for column_name, why in _implied_columns(table, request.question):
        keep(column_name, 2, why)
    for column_name in sorted(enums, key=lambda c: -used(c))[:ENUMS_PER_TABLE]:
        keep(column_name, 2, "enum-like")
    order = {c.name: i for i, c in enumerate(table.columns)}
    return sorted(
        picks.values(), key=lambda p: (p.tier, -used(p.name), order.get(p.name, len(order)))
    )


def _implied_columns(table: Table, question: str) -> list[tuple[str, str]]:
    """The table's columns the question implies (see _IMPLIED_COLUMNS), with why; not ids
    (`country_id` is a key, kept as one if its table joins)."""
    words = set(re.findall(r"[a-z]+", question.lower()))
    return [
        (column.name, why)
        for said, named, why in _IMPLIED_COLUMNS
        if words & said
        for column in table.columns
        for column_words in [set(identifier_words(column.name))]
        if named & column_words and "id" not in column_words
    ]


def _label_columns(table: Table) -> list[str]:
    """The columns that name a row: the first with name or title in its name (`name`, `title`,
    `player_name`), or, when that is a part of a person's name, the parts together
    (`forename` and `surname`): answers name things ("who", "which circuit") more often than
    the question says so, and a person the question names ("Lewis Hamilton") spans both."""
    labels = [c.name for c in table.columns if _is_label(c.name)]
    # A plain `name` or `title` goes before `asciiName` or `name_de` listed earlier.
    labels.sort(key=lambda c: c.lower() not in ("name", "title"))
    if not labels or not _is_name_part(labels[0]):
        return labels[:1]
    return [c for c in labels if _is_name_part(c)][:2]


_NAME_PARTS = {"forename", "surname", "firstname", "lastname"}
_NAME_PART_WORDS = {"first", "last", "given", "family", *_NAME_PARTS}


def _is_label(column: str) -> bool:
    words = set(identifier_words(column))
    return bool({"name", "title", *_NAME_PARTS} & words)


def _is_name_part(column: str) -> bool:
    words = set(identifier_words(column))
    return bool(_NAME_PART_WORDS & words) and ("name" in words or bool(_NAME_PARTS & words))


def join_keys_of(paths: list[dict[str, Any]]) -> set[tuple[str, str]]:
    keys: set[tuple[str, str]] = set()
    for path in paths:
        for edge in path.get("edges", []):
            for child, parent in edge["on"]:
                keys.add((edge["left"], child))
                keys.add((edge["right"], parent))
    return keys
