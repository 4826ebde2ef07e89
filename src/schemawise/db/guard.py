"""Guarded execution (SECURITY.md L5–L7): what every engine's guard shares.

A run is one `GuardedSession`: EXPLAIN and execution inside one connection (or one child
process) under one `Deadline`, enforced from outside the statement — a timer that cancels the
Postgres query, or kills the child process that runs SQLite or DuckDB — whatever the session's
own settings say. The static check runs before this, but this layer would hold on its own.

Engines: `db/pg_guard.py` (Postgres), `db/sandbox.py` (SQLite and DuckDB in a child process).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, Self

# How a guarded run can end without rows, besides a plain database error (which
# validate.errors classifies from the message and SQLSTATE).
TIMEOUT = "timeout"  # the run's deadline passed: the query was cancelled or its worker killed
CANCELLED = "cancelled"  # something other than our deadline cancelled the query
CONNECTION_LOST = "connection_lost"  # the connection or the worker process died mid-run
RESOURCE_LIMIT = "resource_limit"  # the worker exceeded its memory, CPU or file-size limit


@dataclass(frozen=True)
class Limits:
    max_rows: int = 1000
    timeout_seconds: float = 10.0
    max_bytes: int = 10_000_000


@dataclass(frozen=True)
class Deadline:
    """One wall-clock deadline for a whole run: EXPLAIN and execution share it."""

    at: float  # time.monotonic() value

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(time.monotonic() + seconds)

    def remaining(self) -> float:
        return max(0.0, self.at - time.monotonic())

    def expired(self) -> bool:
        return time.monotonic() >= self.at


@dataclass
class QueryResult:
    columns: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    truncated: bool = False
    truncated_reason: str | None = None
    elapsed_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "columns": self.columns,
            "rows": self.rows,
            "row_count": len(self.rows),
            "truncated": self.truncated,
            "truncated_reason": self.truncated_reason,
            "elapsed_ms": round(self.elapsed_ms, 1),
        }


class GuardedQueryError(Exception):
    """The database refused or failed the query. `kind` is set when the guard itself knows
    why (TIMEOUT, CANCELLED, CONNECTION_LOST, RESOURCE_LIMIT); otherwise validate.errors
    classifies the message and SQLSTATE."""

    def __init__(
        self, backend: str, message: str, sqlstate: str | None = None, *, kind: str | None = None
    ) -> None:
        super().__init__(message)
        self.backend = backend
        self.message = message
        self.sqlstate = sqlstate
        self.kind = kind


class GuardedSession(Protocol):
    """One guarded run: `explain` then `execute`, both before the deadline; `close` always."""

    backend: str

    def explain(self, sql: str) -> Any:
        """Postgres: the JSON plan's root node; SQLite: EXPLAIN QUERY PLAN details; DuckDB:
        the plan text."""

    def execute(self, sql: str, params: dict[str, Any] | None = None) -> QueryResult: ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: object) -> None: ...


def value_bytes(value: Any) -> int:
    """A value's size as the caller will hold it (its text form), without building the text
    of large bytes or strings."""
    if value is None:
        return 4
    if isinstance(value, str | bytes | bytearray | memoryview):
        return len(value)
    return len(str(value))


def row_bytes(row: Sequence[Any]) -> int:
    return sum(value_bytes(v) for v in row) + 8 * len(row)


class RowCollector:
    """Keeps rows until the row cap (one extra row proves truncation) or the byte cap; the
    rows kept never exceed the byte cap, since each row is counted before it is kept."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.rows: list[list[Any]] = []
        self.size = 0
        self.truncated = False
        self.reason: str | None = None

    @property
    def done(self) -> bool:
        return self.truncated

    def add(self, row: Sequence[Any]) -> bool:
        """Keep the row if it fits; False once the result is complete (truncated)."""
        if self.truncated:
            return False
        if len(self.rows) == self.limits.max_rows:
            self.truncated, self.reason = True, f"more than {self.limits.max_rows} rows"
            return False
        size = row_bytes(row)
        if self.size + size > self.limits.max_bytes:
            self.truncated, self.reason = True, over_bytes(self.limits, len(self.rows))
            return False
        self.size += size
        self.rows.append(list(row))
        return True


def over_bytes(limits: Limits, kept: int) -> str:
    """Why the rows stopped at the byte cap; with none kept, that the first row alone is over
    it (else "0 rows, truncated" reads as a query that found nothing)."""
    if kept == 0:
        return f"the first row alone is over the cap of {limits.max_bytes:,} bytes: no row is shown"
    return f"more than {limits.max_bytes:,} bytes"


def fetch_capped(
    fetchmany: Callable[[int], Sequence[Sequence[Any]]], limits: Limits, deadline: Deadline
) -> tuple[list[list[Any]], bool, str | None]:
    """Fetch at most max_rows + 1 rows within the byte cap, one row per fetch, checking the
    deadline between fetches (the timer that cancels the query enforces it within one).

    One row per fetch, because a fetch holds its whole batch in memory before any row can be
    counted, and no batch size guessed from the rows seen so far is safe: an outside attack
    sent 255 one-byte rows, then 500 rows of 2 MB, and the client held 1 GB against a 10 MB
    cap. A fetch costs about 0.13 ms on a local socket (0.13 s for 1,000 rows)."""
    collector = RowCollector(limits)
    while not collector.done:
        if deadline.expired():
            raise GuardedQueryError(
                "fetch", "deadline reached while fetching", "57014", kind=TIMEOUT
            )
        batch = fetchmany(1)
        if not batch:
            break
        for row in batch:
            if not collector.add(row):
                break
    return collector.rows, collector.truncated, collector.reason


from schemawise.db.sandbox import explain_duckdb, explain_sqlite, run_duckdb, run_sqlite  # noqa: E402, F401
