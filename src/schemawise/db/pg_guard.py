"""Guarded execution on Postgres: one connection per run, read-only, as a SELECT-only role, and
one deadline enforced from outside the statement.

SQL text may manage to change the session's own settings (SECURITY.md: `ts_stat(text)` ran
`set_config('statement_timeout', '0')` before the allow-list existed), so `statement_timeout`
is only the first line. The deadline is a timer thread that, in order: cancels the query
(`cancel_safe`), asks a supervisor connection to terminate the backend (when one is given:
the embedded database's owner), and finally shuts the socket down so the client never waits
past it. `client_connection_check_interval` makes a backend whose client is gone stop.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from typing import Any, Literal, Self

import psycopg
from psycopg import sql as pgsql
from psycopg.postgres import types as postgres_types
from psycopg.types.string import TextLoader

from schemawise.db.guard import (
    CANCELLED,
    CONNECTION_LOST,
    RESOURCE_LIMIT,
    TIMEOUT,
    Deadline,
    GuardedQueryError,
    Limits,
    QueryResult,
    fetch_capped,
)

# Session settings a caller may ask for (names fixed here, values bound as literals). The
# tenant is not among them: it is the role the run logs in as (db/tenancy.py).
ALLOWED_SETTINGS = frozenset({"hnsw.iterative_scan", "hnsw.ef_search", "hnsw.max_scan_tuples"})

# Seconds after the deadline before the next, blunter, step of the escalation.
TERMINATE_AFTER = 0.5
SHUTDOWN_AFTER = 1.0


class _Watchdog:
    """Escalates at the deadline until `stop()`: cancel, terminate, shut the socket."""

    def __init__(
        self, conn: psycopg.Connection[Any], deadline: Deadline, supervisor_url: str | None
    ) -> None:
        self.conn = conn
        self.deadline = deadline
        self.supervisor_url = supervisor_url
        self.fired = False
        self._stopped = threading.Event()
        self._pid = conn.info.backend_pid
        self._fd = conn.pgconn.socket
        self._thread = threading.Thread(target=self._run, name="schemawise-deadline", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        if self._stopped.wait(self.deadline.remaining()):
            return
        self.fired = True
        with contextlib.suppress(Exception):  # a failed cancel only moves on to the next step
            self.conn.cancel_safe(timeout=TERMINATE_AFTER)
        if self._stopped.wait(max(0.0, self.deadline.at + TERMINATE_AFTER - time.monotonic())):
            return
        if self.supervisor_url:
            try:
                with psycopg.connect(self.supervisor_url, autocommit=True, connect_timeout=2) as c:
                    c.execute("SELECT pg_terminate_backend(%s)", (self._pid,))
            except psycopg.Error:
                pass
        if self._stopped.wait(max(0.0, self.deadline.at + SHUTDOWN_AFTER - time.monotonic())):
            return
        # A duplicate of the descriptor: shutting it down wakes the blocked client, and the
        # server sees the connection end.
        with contextlib.suppress(OSError), socket.socket(fileno=socket.dup(self._fd)) as sock:
            sock.shutdown(socket.SHUT_RDWR)

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(timeout=5)


# Types whose Python value is about the size of its text; every other value (json, jsonb,
# arrays, ranges, multiranges, records, …) arrives as its text. Parsed, those took 18 to 23
# times their counted size (a 40 MB array became 1.2 GB of lists, a 34 MB multirange 600 MB)
# and were built inside one fetch, where no deadline reaches (outside attacks, rounds 2-4).
_SCALAR_TYPES = frozenset(
    {
        "bool", "int2", "int4", "int8", "oid", "float4", "float8", "numeric", "text", "varchar",
        "bpchar", "char", "name", "bytea", "date", "time", "timetz", "timestamp", "timestamptz",
        "interval", "uuid",
    }
)  # fmt: skip


def _load_as_text(conn: psycopg.Connection[Any]) -> None:
    """Allow-list the loaders too: only scalar types become Python values."""
    for info in postgres_types:
        if info.name not in _SCALAR_TYPES:
            conn.adapters.register_loader(info.oid, TextLoader)
        if info.array_oid:
            conn.adapters.register_loader(info.array_oid, TextLoader)


class PostgresSession:
    """`with PostgresSession(url, limits, deadline) as s: s.explain(sql); s.execute(sql)`."""

    backend = "postgres"

    def __init__(
        self,
        url: str,
        limits: Limits,
        deadline: Deadline,
        *,
        settings: dict[str, Any] | None = None,
        supervisor_url: str | None = None,
    ) -> None:
        self.limits = limits
        self.deadline = deadline
        connect_timeout = max(2, min(10, int(deadline.remaining()) + 1))
        try:
            self.conn = psycopg.connect(url, autocommit=False, connect_timeout=connect_timeout)
        except (psycopg.OperationalError, psycopg.ProgrammingError) as exc:
            raise GuardedQueryError("postgres", str(exc).strip(), "08001") from exc
        # json and jsonb arrive as their text: parsed into Python objects they took about 20
        # times their counted size, could nest past the recursion limit, and were parsed
        # outside any deadline (all found by an outside attack). The caller gets the JSON text.
        _load_as_text(self.conn)
        self.watchdog = _Watchdog(self.conn, deadline, supervisor_url)
        try:
            self._begin(settings or {})
        except BaseException:
            self.close()
            raise

    def _begin(self, settings: dict[str, Any]) -> None:
        self.conn.read_only = True  # BEGIN READ ONLY
        timeout_ms = max(1, int(self.deadline.remaining() * 1000))
        with self._errors(), self.conn.cursor() as setup:
            for setting, value in (
                ("statement_timeout", timeout_ms),
                ("lock_timeout", min(timeout_ms, 2000)),
                ("idle_in_transaction_session_timeout", timeout_ms + 5000),
            ):
                setup.execute(
                    pgsql.SQL("SET LOCAL {} = {}").format(pgsql.Identifier(setting), value)
                )
            if self.conn.info.server_version >= 140000:
                # A backend whose client is gone (killed, timed out) stops within a second.
                setup.execute("SET LOCAL client_connection_check_interval = 1000")
            # A fixed search_path: pg_catalog first, so no user object shadows a built-in.
            setup.execute("SET LOCAL search_path = pg_catalog, public")
            for name, value in settings.items():
                if name not in ALLOWED_SETTINGS:
                    raise GuardedQueryError("postgres", f"setting {name} is not allowed")
                setup.execute(
                    pgsql.SQL("SET LOCAL {} = {}").format(
                        pgsql.SQL(name), pgsql.Literal(str(value))
                    )
                )

    def _errors(self) -> _ErrorMapper:
        return _ErrorMapper(self)

    def explain(self, sql: str) -> dict[str, Any]:
        """The JSON plan's root, through the extended protocol (prepare=True refuses a second
        statement). Its estimates never leave the gate."""
        with self._errors(), self.conn.cursor() as cursor:
            # VERBOSE names the schema of every table read, for reads_row_secured.
            row = cursor.execute("EXPLAIN (FORMAT JSON, VERBOSE) " + sql, prepare=True).fetchone()
        # json arrives as text on this connection (see __init__); the server wrote this one.
        plan = json.loads(row[0]) if row and isinstance(row[0], str) else (row[0] if row else [])
        return plan[0]["Plan"] if plan else {}

    def reads_row_secured(self, plan: dict[str, Any]) -> bool:
        """Whether the plan reads a table with row-level security. Its estimates then come
        from statistics over every tenant's rows: a gate deciding on them would let a caller
        read other tenants' row counts and values back, one refusal at a time."""
        tables = sorted(
            {
                (str(node["Schema"]), str(node["Relation Name"]))
                for node in _plan_nodes(plan)
                if "Relation Name" in node and "Schema" in node
            }
        )
        if not tables:
            return False
        with self._errors(), self.conn.cursor() as cursor:
            row = cursor.execute(
                "SELECT coalesce(bool_or(c.relrowsecurity), false) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "JOIN unnest(%s::text[], %s::text[]) AS t(schema_name, table_name) "
                "ON n.nspname = t.schema_name AND c.relname = t.table_name",
                ([t[0] for t in tables], [t[1] for t in tables]),
            ).fetchone()
        return bool(row and row[0])

    def execute(self, sql: str, params: dict[str, Any] | None = None) -> QueryResult:
        started = time.monotonic()
        # A named cursor sends DECLARE … CURSOR FOR <sql> through the extended protocol: the
        # server refuses a second statement and data-modifying CTEs.
        cursor = self.conn.cursor(name="schemawise_guarded")
        try:
            with self._errors():
                cursor.execute(sql, params or None)
                rows, truncated, reason = fetch_capped(cursor.fetchmany, self.limits, self.deadline)
                columns = [d.name for d in cursor.description or []]
        finally:
            self._close_cursor(cursor)
        return QueryResult(columns, rows, truncated, reason, (time.monotonic() - started) * 1000)

    def _close_cursor(self, cursor: psycopg.ServerCursor[Any]) -> None:
        """Close the cursor even on a cancelled or lost connection (closing the connection
        first lets the cursor close without a round trip)."""
        try:
            cursor.close()
        except psycopg.Error:
            self.conn.close()
            cursor.close()

    def close(self) -> None:
        self.watchdog.stop()
        try:
            if not self.conn.closed and not self.conn.broken:
                self.conn.rollback()
        except psycopg.Error:
            pass  # a lost connection has nothing left to roll back
        finally:
            self.conn.close()  # nothing of the session survives: no pooled state to reset

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _plan_nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    nodes = [plan]
    for child in plan.get("Plans", []) or []:
        nodes.extend(_plan_nodes(child))
    return nodes


class _ErrorMapper:
    """Turns psycopg's errors into GuardedQueryError with the cause the guard knows."""

    def __init__(self, session: PostgresSession) -> None:
        self.session = session

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, _: object
    ) -> Literal[False]:
        if exc is None or isinstance(exc, GuardedQueryError):
            return False
        if isinstance(exc, MemoryError | RecursionError | OverflowError | ValueError):
            # A value the client could not hold or read (psycopg's loaders): a classified
            # ending, never a traceback.
            kind = RESOURCE_LIMIT if isinstance(exc, MemoryError | RecursionError) else None
            raise GuardedQueryError(
                "postgres", f"a value could not be read: {type(exc).__name__}", kind=kind
            ) from exc
        if not isinstance(exc, psycopg.Error):
            return False
        state = getattr(exc, "sqlstate", None)
        message = str(exc).strip() or type(exc).__name__
        if self.session.watchdog.fired or self.session.deadline.expired():
            raise GuardedQueryError(
                "postgres", "deadline reached: the query was cancelled", "57014", kind=TIMEOUT
            ) from exc
        if state == "57014" and "statement timeout" in message:
            # statement_timeout was armed with the same deadline and fired first.
            raise GuardedQueryError("postgres", message, state, kind=TIMEOUT) from exc
        if state == "57014":
            raise GuardedQueryError("postgres", message, state, kind=CANCELLED) from exc
        if isinstance(exc, psycopg.OperationalError) or self.session.conn.broken:
            raise GuardedQueryError("postgres", message, state, kind=CONNECTION_LOST) from exc
        raise GuardedQueryError("postgres", message, state) from exc


def run_postgres(
    url: str,
    sql: str,
    limits: Limits,
    *,
    params: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
    supervisor_url: str | None = None,
) -> QueryResult:
    """One guarded query without the EXPLAIN gate (the gate lives in runner.run_checked)."""
    deadline = Deadline.after(limits.timeout_seconds)
    with PostgresSession(
        url, limits, deadline, settings=settings, supervisor_url=supervisor_url
    ) as session:
        return session.execute(sql, params)


def explain_postgres(url: str, sql: str, timeout_seconds: float) -> dict[str, Any]:
    with PostgresSession(
        url, Limits(timeout_seconds=timeout_seconds), Deadline.after(timeout_seconds)
    ) as session:
        return session.explain(sql)
