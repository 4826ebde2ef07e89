"""Twenty concurrent runs on the embedded database, two of them hostile: every benign run
completes with the right answer, each hostile one is refused or cancelled at its deadline,
and no backend outlives its run."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
import pytest

from schemawise.db.guard import GuardedQueryError, Limits
from schemawise.db.pg_guard import run_postgres
from schemawise.db.roles import ensure_reader_role
from schemawise.demo import warehouse
from schemawise.graph.model import SchemaGraph
from schemawise.runner import run_checked

BENIGN = [
    "SELECT count(*) FROM shop.orders",
    "SELECT status, count(*) FROM shop.orders GROUP BY status ORDER BY status",
    "SELECT count(*) FROM shop.order_items",
    "SELECT sum(quantity) FROM shop.order_items",
    "SELECT count(*) FROM shop.customers",
    "SELECT count(*) FROM shop.shipments",
]
DEADLINE_BUSTER = (
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 2000000000) "
    "SELECT count(*) FROM r"
)
# Run through the guard alone (no static check): the database itself must refuse it.
TERMINATOR = (
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
    "WHERE usename LIKE 'schemawise%' AND pid <> pg_backend_pid()"
)
HOSTILE_DEADLINE = 2.0


def _truth(admin: str) -> dict[str, Any]:
    with psycopg.connect(admin) as conn:
        return {sql: conn.execute(sql).fetchall() for sql in BENIGN}


def _reader_backends(admin: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(admin, autocommit=True) as conn:
        return conn.execute(
            "SELECT pid, usename, state, left(query, 60) FROM pg_stat_activity "
            "WHERE usename LIKE 'schemawise%' AND pid <> pg_backend_pid()"
        ).fetchall()


def test_twenty_concurrent_runs_two_of_them_hostile(
    embedded_url: str, demo_rows: warehouse.DemoRows, demo_graph: SchemaGraph
) -> None:
    reader = ensure_reader_role(embedded_url)
    truth = _truth(embedded_url)
    benign = [BENIGN[i % len(BENIGN)] for i in range(18)]

    def benign_run(sql: str) -> tuple[str, Any]:
        outcome = run_checked("embedded", sql, graph=demo_graph, limits=Limits(timeout_seconds=60))
        return sql, outcome

    def buster() -> tuple[float, Any]:
        started = time.monotonic()
        outcome = run_checked(
            "embedded",
            DEADLINE_BUSTER,
            graph=demo_graph,
            limits=Limits(timeout_seconds=HOSTILE_DEADLINE),
        )
        return time.monotonic() - started, outcome

    def terminator() -> GuardedQueryError | None:
        try:
            run_postgres(reader, TERMINATOR, Limits(timeout_seconds=10))
        except GuardedQueryError as exc:
            return exc
        return None

    with ThreadPoolExecutor(max_workers=20) as pool:
        hostile_deadline = pool.submit(buster)
        benign_futures = [pool.submit(benign_run, sql) for sql in benign[:9]]
        hostile_terminate = pool.submit(terminator)
        benign_futures += [pool.submit(benign_run, sql) for sql in benign[9:]]
        results = [f.result(timeout=120) for f in benign_futures]
        elapsed, busted = hostile_deadline.result(timeout=60)
        refused = hostile_terminate.result(timeout=60)

    for sql, outcome in results:
        assert outcome.ok, (sql, outcome.to_dict())
        assert outcome.result.rows == [list(r) for r in truth[sql]], sql
    assert busted.result is None and busted.error is not None
    assert busted.error.type == "timeout", busted.to_dict()
    assert elapsed < HOSTILE_DEADLINE + 2
    assert refused is not None and refused.sqlstate == "42501", refused
    deadline = time.monotonic() + 5
    while (left := _reader_backends(embedded_url)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert left == []


@pytest.mark.parametrize("hostile_first", [True, False])
def test_a_hostile_run_cannot_end_another(
    embedded_url: str, demo_rows: warehouse.DemoRows, hostile_first: bool
) -> None:
    """pg_terminate_backend and pg_cancel_backend against the other readers' backends, with
    the victim mid-query: the victim's answer arrives whole."""
    reader = ensure_reader_role(embedded_url)
    slow = "SELECT count(*) FROM generate_series(1, 3000000)"
    with ThreadPoolExecutor(max_workers=2) as pool:
        if hostile_first:
            attacks = [pool.submit(_attack, reader)]
            victim = pool.submit(run_postgres, reader, slow, Limits(timeout_seconds=30))
        else:
            victim = pool.submit(run_postgres, reader, slow, Limits(timeout_seconds=30))
            time.sleep(0.3)
            attacks = [pool.submit(_attack, reader)]
        assert victim.result(timeout=60).rows == [[3000000]]
        assert all(a.result(timeout=60) == "42501" for a in attacks)


def _attack(reader: str) -> str | None:
    for function in ("pg_terminate_backend", "pg_cancel_backend"):
        try:
            run_postgres(
                reader,
                f"SELECT {function}(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()",
                Limits(timeout_seconds=10),
            )
        except GuardedQueryError as exc:
            if exc.sqlstate != "42501":
                return exc.sqlstate
            continue
        return "ran"
    return "42501"
