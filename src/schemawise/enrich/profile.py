"""Profiles of the data, cheap and bounded: distinct counts, null fractions, a few sample
values, and the full value list of low-cardinality columns. Postgres statistics (`pg_stats`,
kept by ANALYZE) are read first; tables without them, and SQLite and DuckDB, are sampled with
a row limit under a time budget. A big table is never scanned whole."""

from __future__ import annotations

import re
import time
from collections import Counter
from functools import cached_property
from typing import Any

from pydantic import BaseModel, Field

from schemawise.db.base import QueryFailedError, Source
from schemawise.graph.model import SchemaGraph

SAMPLE_ROWS = 1000
SAMPLES_KEPT = 3
# A column with at most this many distinct values is enum-like: its whole value list is kept.
LOW_CARDINALITY = 20
VALUE_CHARS = 40
# Distinct text values kept per column for the value index (index/cards.py): a question that
# names a value ("Anguilla", "North Carolina") finds the column holding it.
VALUES_INDEXED = 100


class ColumnProfile(BaseModel):
    distinct: int | None = None  # estimated; from a sample it is a lower bound
    null_fraction: float | None = None
    samples: list[str] = Field(default_factory=list)  # the most common values first
    values: list[str] = Field(default_factory=list)  # every value, for low-cardinality columns
    # Distinct values that read as words (not numbers or dates), most common first: for the
    # value index when `values` is not the whole list.
    seen: list[str] = Field(default_factory=list)
    basis: str = "sample"  # "pg_stats" or "sample"

    @cached_property
    def free_text(self) -> bool:
        """Its values read as sentences (`reads_as_prose`): comments, descriptions. Their words
        are not the database's vocabulary, and no question quotes them: retrieval leaves them
        out (index documents, table evidence, values shown, enum-like columns)."""
        return reads_as_prose(self.seen or self.values or self.samples)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text[:VALUE_CHARS] if text else None


def wordlike(value: str) -> bool:
    return any(c.isalpha() for c in value) and not value[:1].isdigit()


# What makes a column's values sentences rather than names: several words a value, mostly
# lower case, a sentence ending inside some of them (values are kept cut at VALUE_CHARS, so a
# sentence's end shows in only a share of them). Names, titles and addresses are capitalised;
# `goldenrod lavender spring lace` and "action, adventure, comedy" end no sentence.
PROSE_WORDS = 4
PROSE_LOWER_SHARE = 0.7
PROSE_PUNCTUATED_SHARE = 0.15
PROSE_MIN_VALUES = 5
# A sentence ends inside the value. Not a comma: "action, adventure, comedy" is a list of words
# a question may well use.
_INNER_PUNCTUATION = re.compile(r"[.;:!?]\s")


def reads_as_prose(values: list[str]) -> bool:
    """The values are free text (comments, descriptions): their words are the text's, not
    the database's vocabulary, and a question does not quote them."""
    texts = [v.strip() for v in values if v.strip()]
    if len(texts) < PROSE_MIN_VALUES:
        return False
    words = [t.split() for t in texts]
    if sum(map(len, words)) < PROSE_WORDS * len(texts):
        return False
    alphabetic = [w for ws in words for w in ws if w[:1].isalpha()]
    lower = sum(1 for w in alphabetic if w[:1].islower())
    punctuated = sum(1 for t in texts if _INNER_PUNCTUATION.search(t))
    mostly_lower = lower >= PROSE_LOWER_SHARE * max(1, len(alphabetic))
    return mostly_lower and punctuated >= PROSE_PUNCTUATED_SHARE * len(texts)


def from_values(values: list[Any], total_rows: int | None = None) -> ColumnProfile:
    """A profile from a sample of a column's values."""
    present = [t for t in (_text(v) for v in values) if t is not None]
    counts = Counter(present)
    nulls = len(values) - len(present)
    # When the sample is the whole table every value was seen: the list is complete.
    complete = total_rows is not None and len(values) >= total_rows
    few = len(counts) <= LOW_CARDINALITY and (complete or len(present) >= 5 * len(counts))
    return ColumnProfile(
        distinct=len(counts),
        null_fraction=round(nulls / len(values), 4) if values else None,
        samples=[v for v, _ in counts.most_common(SAMPLES_KEPT)],
        values=sorted(counts) if few and counts else [],
        seen=[] if few else [v for v, _ in counts.most_common() if wordlike(v)][:VALUES_INDEXED],
    )


PG_STATS_SQL = """
SELECT s.schemaname || '.' || s.tablename, s.attname, s.n_distinct, s.null_frac,
       array_to_json(s.most_common_vals::text::text[])::text, c.reltuples,
       array_to_json(s.histogram_bounds::text::text[])::text
FROM pg_stats s
JOIN pg_namespace n ON n.nspname = s.schemaname
JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = s.tablename
WHERE s.schemaname NOT IN ('pg_catalog', 'information_schema', 'schemawise')
"""


def _from_pg_stats(source: Source, graph: SchemaGraph) -> dict[str, ColumnProfile]:
    import json

    try:
        rows = source.query(PG_STATS_SQL, timeout_ms=10_000)
    except QueryFailedError:
        return {}
    out: dict[str, ColumnProfile] = {}
    for table_name, column, n_distinct, null_frac, common, reltuples, bounds in rows:
        table = graph.table(table_name)
        if table is None:
            continue
        # Negative n_distinct is a share of the rows (it grows with the table).
        distinct = (
            int(n_distinct)
            if n_distinct >= 0
            else round(-float(n_distinct) * max(float(reltuples or 0), 0))
        )
        values = [t for t in (_text(v) for v in json.loads(common or "[]")) if t is not None]
        # Values no more common than the rest are not among the most common: a column whose
        # values are all distinct (`region_name`, `category_name` of a small dimension) has
        # none, and its values are the histogram's bounds (up to the statistics target, 100
        # by default: every value of a small table).
        spread = [t for t in (_text(v) for v in json.loads(bounds or "[]")) if t is not None]
        every = list(dict.fromkeys([*values, *spread]))
        out[f"{table.name}.{column}".lower()] = ColumnProfile(
            distinct=distinct,
            null_fraction=round(float(null_frac), 4),
            samples=every[:SAMPLES_KEPT],
            # The values seen are all the values when there are no more than them.
            values=sorted(every) if 0 < distinct <= min(LOW_CARDINALITY, len(every)) else [],
            seen=[v for v in every if wordlike(v)][:VALUES_INDEXED],
            basis="pg_stats",
        )
    return out


def profile_source(
    source: Source,
    graph: SchemaGraph,
    *,
    rows: int = SAMPLE_ROWS,
    budget_seconds: float = 20.0,
) -> dict[str, ColumnProfile]:
    """`table.column` (lower case) → its profile. Tables left when the budget runs out are
    not profiled (their cards simply carry no samples)."""
    profiles = _from_pg_stats(source, graph) if source.dialect == "postgres" else {}
    started = time.monotonic()
    for table in graph.tables:
        if table.kind == "view" or not table.columns:
            continue
        if all(f"{table.name}.{c.name}".lower() in profiles for c in table.columns):
            continue
        if time.monotonic() - started > budget_seconds:
            break
        names = ", ".join(source.quote(c.name) for c in table.columns)
        sql = f"SELECT {names} FROM {source.table_ref(table.name)} {source.sample_clause(rows)}"
        try:
            sample = source.query(sql, timeout_ms=5000)
        except QueryFailedError:
            continue
        # Fewer rows than asked for: the sample is the whole table.
        whole = len(sample) if len(sample) < rows else table.row_count
        for index, column in enumerate(table.columns):
            key = f"{table.name}.{column.name}".lower()
            if key not in profiles:
                profiles[key] = from_values([r[index] for r in sample], whole)
    return profiles
