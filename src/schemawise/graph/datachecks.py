"""Bounded checks on the data: is a key unique, are a column's values inside another's.

Every query has a statement timeout and reads at most `sample_rows` rows; the whole run has a
time budget, after which checks answer "unknown" and the graph says what went unmeasured.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from schemawise.db.base import QueryFailedError, Source
from schemawise.graph.model import Problem

_PROBLEM_HINTS = {
    "permission": "Grant SELECT on it to the connecting role; its data checks were skipped.",
    "missing": "The table disappeared during extraction; run the command again.",
    "timeout": "Its check ran past the 5 s statement timeout: the table keeps its declared "
    "cardinality (an index on the key columns speeds the check up).",
    "connection": "The connection dropped; run the command again.",
}


@dataclass(frozen=True)
class Uniqueness:
    unique: bool | None  # None: unknown (no rows, a failed query, or the budget ran out)
    rows: int
    sampled: bool


@dataclass
class DataChecker:
    source: Source
    budget_seconds: float = 30.0
    timeout_ms: int = 5000
    sample_rows: int = 200_000
    inclusion_sample: int = 2000
    problems: list[Problem] = field(default_factory=list)
    queries: int = 0
    skipped_for_budget: int = 0
    _deadline: float = 0.0
    _uniqueness: dict[tuple[str, tuple[str, ...]], Uniqueness] = field(default_factory=dict)
    _failed_tables: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._deadline = time.monotonic() + self.budget_seconds

    @property
    def out_of_time(self) -> bool:
        return time.monotonic() > self._deadline

    def _run(self, table: str, sql: str) -> list[tuple[Any, ...]] | None:
        if table in self._failed_tables:
            return None
        if self.out_of_time:
            self.skipped_for_budget += 1
            return None
        remaining_ms = int((self._deadline - time.monotonic()) * 1000)
        self.queries += 1
        try:
            return self.source.query(sql, timeout_ms=max(100, min(self.timeout_ms, remaining_ms)))
        except QueryFailedError as exc:
            if exc.kind != "timeout":
                self._failed_tables.add(table)
            self.problems.append(
                Problem(
                    table=table,
                    stage="data_check",
                    message=f"{exc.kind}: {str(exc).strip().splitlines()[0][:300]}",
                    hint=_PROBLEM_HINTS.get(exc.kind, "The data check was skipped."),
                )
            )
            return None

    def _not_null(self, columns: tuple[str, ...]) -> str:
        return " AND ".join(f"{self.source.quote(c)} IS NOT NULL" for c in columns)

    def uniqueness(self, table: str, columns: list[str]) -> Uniqueness:
        key = (table, tuple(columns))
        if key in self._uniqueness:
            return self._uniqueness[key]
        cols = ", ".join(self.source.quote(c) for c in columns)
        sql = (
            f"WITH s AS (SELECT {cols} FROM {self.source.table_ref(table)} "
            f"WHERE {self._not_null(key[1])} {self.source.sample_clause(self.sample_rows)}) "
            "SELECT (SELECT count(*) FROM s), (SELECT count(*) FROM (SELECT DISTINCT * FROM s) d)"
        )
        rows = self._run(table, sql)
        if not rows:
            result = Uniqueness(None, 0, False)
        else:
            total, distinct = int(rows[0][0] or 0), int(rows[0][1] or 0)
            sampled = total >= self.sample_rows
            # A duplicate in a sample proves non-uniqueness; no duplicate in a sample suggests it.
            result = Uniqueness(None if total == 0 else total == distinct, total, sampled)
        self._uniqueness[key] = result
        return result

    def inclusion(
        self,
        child: str,
        child_columns: list[str],
        parent: str,
        parent_columns: list[str],
        *,
        same_types: bool = True,
    ) -> tuple[float, int] | None:
        """Share of (a sample of) the child's distinct values found in the parent, and how many.

        Columns of different types are compared as text, so that the check cannot fail on a
        type error; same-typed columns are compared as they are, so that an index can serve.
        """
        q = self.source.quote

        def cast(expression: str) -> str:
            return expression if same_types else self.source.text_cast(expression)

        child_cols = ", ".join(f"{cast(q(c))} AS v{i}" for i, c in enumerate(child_columns))
        match = " AND ".join(
            f"{cast('p.' + q(pc))} = s.v{i}" for i, pc in enumerate(parent_columns)
        )
        sql = (
            f"WITH s AS (SELECT DISTINCT {child_cols} FROM {self.source.table_ref(child)} "
            f"WHERE {self._not_null(tuple(child_columns))} "
            f"{self.source.sample_clause(self.inclusion_sample)}) "
            "SELECT count(*), count(*) FILTER (WHERE EXISTS "
            f"(SELECT 1 FROM {self.source.table_ref(parent)} p WHERE {match})) FROM s"
        )
        rows = self._run(parent, sql) if child not in self._failed_tables else None
        if not rows or not rows[0][0]:
            return None
        distinct, found = int(rows[0][0]), int(rows[0][1] or 0)
        return found / distinct, distinct

    def same_row_share(
        self, table: str, column: str, other: str, *, same_types: bool = True
    ) -> float | None:
        """Share of (a sample of) a table's rows where `column` equals `other` on the same row,
        among rows where `column` is set; None when unknown. Same-typed columns compare as they
        are (a REAL 3.0 is the integer 3, not the text '3.0'), others as text."""
        q = self.source.quote

        def cast(expression: str) -> str:
            return expression if same_types else self.source.text_cast(expression)

        sql = (
            f"WITH s AS (SELECT {cast(q(column))} AS a, {cast(q(other))} AS b "
            f"FROM {self.source.table_ref(table)} "
            f"WHERE {q(column)} IS NOT NULL {self.source.sample_clause(self.sample_rows)}) "
            "SELECT count(*), count(*) FILTER (WHERE a = b) FROM s"
        )
        rows = self._run(table, sql)
        if not rows or not rows[0][0]:
            return None
        return int(rows[0][1] or 0) / int(rows[0][0])

    def distinct_between(self, table: str, column: str, low: int, high: int) -> int | None:
        """How many distinct values of a column lie in [low, high]: how densely a key fills a
        range, for keys too large to read whole."""
        q = self.source.quote
        sql = (
            f"SELECT count(DISTINCT {q(column)}) FROM {self.source.table_ref(table)} "
            f"WHERE {q(column)} BETWEEN {int(low)} AND {int(high)}"
        )
        rows = self._run(table, sql)
        return None if not rows else int(rows[0][0] or 0)

    def distinct_values(
        self, table: str, column: str, limit: int, *, whole: bool = True
    ) -> list[Any] | None:
        """Up to `limit` distinct non-null values of a column. With `whole`, None when it has
        more, since containment in part of a key would mislead; a child's values may be a
        sample. None too when the check could not run."""
        q = self.source.quote
        sql = (
            f"SELECT DISTINCT {q(column)} FROM {self.source.table_ref(table)} "
            f"WHERE {q(column)} IS NOT NULL {self.source.sample_clause(limit + 1)}"
        )
        rows = self._run(table, sql)
        if rows is None or (whole and len(rows) > limit):
            return None
        return [r[0] for r in rows[:limit]]
