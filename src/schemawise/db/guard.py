"""Guarded execution (SECURITY.md L5–L7): the caller's original text, one statement, read-only,
time- and size-capped, always rolled back. The static check runs before this, but this layer
would hold on its own."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
import psycopg
from psycopg import sql as pgsql

from schemawise.db.duckdb import open_read_only
from schemawise.db.sqlite_policy import apply_limits, authorizer


@dataclass(frozen=True)
class Limits:
    max_rows: int = 1000
    timeout_seconds: float = 10.0
    max_bytes: int = 10_000_000


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
    """The database refused or failed the query; classified by validate.errors."""

    def __init__(self, backend: str, message: str, sqlstate: str | None = None) -> None:
        super().__init__(message)
        self.backend = backend
        self.message = message
        self.sqlstate = sqlstate


def _row_bytes(row: Sequence[Any]) -> int:
    return sum(len(str(v)) for v in row) + 8 * len(row)


def _fetch(
    fetchmany: Callable[[int], Sequence[Sequence[Any]]], limits: Limits, deadline: float
) -> tuple[list[list[Any]], bool, str | None]:
    """Fetch at most max_rows + 1 rows (the extra one only proves truncation), within the
    byte cap and the wall clock."""
    rows: list[list[Any]] = []
    size = 0
    while True:
        batch = fetchmany(min(500, limits.max_rows + 1 - len(rows)))
        if not batch:
            return rows, False, None
        for row in batch:
            if len(rows) == limits.max_rows:
                return rows, True, f"more than {limits.max_rows} rows"
            size += _row_bytes(row)
            if size > limits.max_bytes:
                return rows, True, f"more than {limits.max_bytes:,} bytes"
            rows.append(list(row))
        if time.monotonic() > deadline:
            raise GuardedQueryError("fetch", "wall-clock limit reached while fetching", "57014")


# Session settings a caller may ask for (values are formatted as literals, names fixed here).
ALLOWED_SETTINGS = frozenset(
    {"hnsw.iterative_scan", "hnsw.ef_search", "hnsw.max_scan_tuples", "schemawise.tenant"}
)


def run_postgres(
    url: str,
    sql: str,
    limits: Limits,
    *,
    params: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
) -> QueryResult:
    started = time.monotonic()
    deadline = started + limits.timeout_seconds
    timeout_ms = int(limits.timeout_seconds * 1000)
    try:
        conn = psycopg.connect(url, autocommit=False, connect_timeout=10)
    except psycopg.OperationalError as exc:
        raise GuardedQueryError("postgres", str(exc).strip(), "08001") from exc
    try:
        conn.read_only = True  # BEGIN READ ONLY
        with conn.cursor() as setup:
            for setting, value in (
                ("statement_timeout", timeout_ms),
                ("lock_timeout", min(timeout_ms, 2000)),
                ("idle_in_transaction_session_timeout", timeout_ms + 5000),
            ):
                setup.execute(
                    pgsql.SQL("SET LOCAL {} = {}").format(pgsql.Identifier(setting), value)
                )
            # A fixed search_path: pg_catalog first, so no user object shadows a built-in.
            setup.execute("SET LOCAL search_path = pg_catalog, public")
            for name, value in (settings or {}).items():
                if name not in ALLOWED_SETTINGS:
                    raise GuardedQueryError("postgres", f"setting {name} is not allowed")
                setup.execute(
                    pgsql.SQL("SET LOCAL {} = {}").format(
                        pgsql.SQL(name), pgsql.Literal(str(value))
                    )
                )
        # A named cursor sends DECLARE … CURSOR FOR <sql> through the extended protocol: the
        # server refuses a second statement and data-modifying CTEs.
        with conn.cursor(name="schemawise_guarded") as cursor:
            cursor.execute(sql, params or None)
            rows, truncated, reason = _fetch(cursor.fetchmany, limits, deadline)
            columns = [d.name for d in cursor.description or []]
        return QueryResult(columns, rows, truncated, reason, (time.monotonic() - started) * 1000)
    except psycopg.Error as exc:
        state = getattr(exc, "sqlstate", None)
        raise GuardedQueryError("postgres", str(exc).strip(), state) from exc
    finally:
        try:
            conn.rollback()
        finally:
            conn.close()  # nothing of the session survives: no pooled state to reset


def explain_postgres(url: str, sql: str, timeout_seconds: float) -> dict[str, Any]:
    """The JSON plan, through the extended protocol (prepare=True refuses a second statement)."""
    with psycopg.connect(url, autocommit=False, connect_timeout=10) as conn:
        conn.read_only = True
        try:
            conn.execute(
                pgsql.SQL("SET LOCAL statement_timeout = {}").format(int(timeout_seconds * 1000))
            )
            row = conn.execute("EXPLAIN (FORMAT JSON) " + sql, prepare=True).fetchone()
        except psycopg.Error as exc:
            raise GuardedQueryError(
                "postgres", str(exc).strip(), getattr(exc, "sqlstate", None)
            ) from exc
        finally:
            conn.rollback()
    plan = row[0] if row else []
    return plan[0]["Plan"] if plan else {}


def _sqlite_connection(path: str, deadline: float) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    apply_limits(conn)
    conn.set_authorizer(authorizer)
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 1000)
    return conn


def run_sqlite(path: str, sql: str, limits: Limits) -> QueryResult:
    started = time.monotonic()
    deadline = started + limits.timeout_seconds
    try:
        conn = _sqlite_connection(path, deadline)
    except sqlite3.Error as exc:
        raise GuardedQueryError("sqlite", str(exc)) from exc
    try:
        # execute() runs one statement and refuses a second (executescript is never used).
        cursor = conn.execute(sql)
        rows, truncated, reason = _fetch(cursor.fetchmany, limits, deadline)
        columns = [d[0] for d in cursor.description or []]
        return QueryResult(columns, rows, truncated, reason, (time.monotonic() - started) * 1000)
    except (sqlite3.Error, sqlite3.Warning) as exc:
        message = str(exc)
        if "interrupted" in message:
            raise GuardedQueryError(
                "sqlite", "interrupted: wall-clock limit reached", "57014"
            ) from exc
        raise GuardedQueryError("sqlite", message) from exc
    finally:
        conn.rollback()
        conn.close()


def explain_sqlite(path: str, sql: str, timeout_seconds: float) -> list[str]:
    deadline = time.monotonic() + timeout_seconds
    conn = _sqlite_connection(path, deadline)
    try:
        return [str(r[-1]) for r in conn.execute("EXPLAIN QUERY PLAN " + sql).fetchall()]
    except (sqlite3.Error, sqlite3.Warning) as exc:
        raise GuardedQueryError("sqlite", str(exc)) from exc
    finally:
        conn.close()


def run_duckdb(path: str, sql: str, limits: Limits) -> QueryResult:
    started = time.monotonic()
    deadline = started + limits.timeout_seconds
    try:
        conn = open_read_only(path)
    except duckdb.Error as exc:
        raise GuardedQueryError("duckdb", str(exc)) from exc
    # DuckDB has no statement timeout: a timer interrupts the connection.
    timer = threading.Timer(limits.timeout_seconds, conn.interrupt)
    timer.start()
    try:
        statements = duckdb.extract_statements(sql)
        if len(statements) != 1:
            raise GuardedQueryError(
                "duckdb", f"exactly one statement allowed, got {len(statements)}"
            )
        cursor = conn.execute(sql)
        rows, truncated, reason = _fetch(cursor.fetchmany, limits, deadline)
        columns = [d[0] for d in cursor.description or []]
        return QueryResult(columns, rows, truncated, reason, (time.monotonic() - started) * 1000)
    except duckdb.InterruptException as exc:
        raise GuardedQueryError("duckdb", "interrupted: wall-clock limit reached", "57014") from exc
    except duckdb.Error as exc:
        raise GuardedQueryError("duckdb", str(exc)) from exc
    finally:
        timer.cancel()
        conn.close()


def explain_duckdb(path: str, sql: str) -> str:
    conn = open_read_only(path)
    try:
        rows = conn.execute("EXPLAIN " + sql).fetchall()
        return "\n".join(str(r[-1]) for r in rows)
    except duckdb.Error as exc:
        raise GuardedQueryError("duckdb", str(exc)) from exc
    finally:
        conn.close()
