"""Hostile SQL through `check` and `run` against the real embedded Postgres and SQLite:
every statement refused, and the database verified unchanged afterwards (row counts and a
checksum of every table, no new files, no new roles)."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import psycopg
import pytest

from schemawise.db.guard import GuardedQueryError, Limits, run_duckdb, run_sqlite
from schemawise.db.pg_guard import run_postgres
from schemawise.db.roles import ensure_reader_role
from schemawise.demo import warehouse
from schemawise.graph.model import SchemaGraph
from schemawise.runner import run_checked
from schemawise.validate.check import check_sql
from tests.unit.test_safety import HOSTILE_POSTGRES, HOSTILE_SQLITE

# Statements a check might let through but the database's own guards must stop.
EXPENSIVE = [
    "SELECT count(*) FROM shop.order_items a JOIN shop.order_items b ON true",
    "SELECT * FROM shop.orders a CROSS JOIN shop.order_items b CROSS JOIN shop.shipments c",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
    "SELECT count(*) FROM generate_series(1, 100000000)",
]


def _fingerprint(url: str) -> tuple[str, int]:
    """Checksum of every table in shop, and the number of roles."""
    digest = hashlib.sha256()
    with psycopg.connect(url) as conn:
        tables = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'shop' ORDER BY 1"
        ).fetchall()
        for (table,) in tables:
            rows = conn.execute(
                f"SELECT count(*), md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) "
                f'FROM shop."{table}" t'
            ).fetchone()
            digest.update(f"{table}:{rows}".encode())
        roles = conn.execute("SELECT count(*) FROM pg_roles").fetchone()
    assert roles is not None
    return digest.hexdigest(), int(roles[0])


@pytest.fixture(scope="module")
def pg_graph(demo_graph: SchemaGraph) -> SchemaGraph:
    return demo_graph


def test_hostile_postgres_refused_by_check_and_run(
    embedded_url: str, demo_rows: warehouse.DemoRows, pg_graph: SchemaGraph, tmp_path: Path
) -> None:
    ensure_reader_role(embedded_url)  # created on first use; not part of what is compared
    before = _fingerprint(embedded_url)
    marker = Path("/tmp/pwned")
    marker.unlink(missing_ok=True)
    refused = 0
    for sql in HOSTILE_POSTGRES:
        assert not check_sql(sql, pg_graph).ok, sql
        outcome = run_checked("embedded", sql, graph=pg_graph, limits=Limits(timeout_seconds=2))
        assert not outcome.ok and outcome.result is None, sql
        assert "execute" not in outcome.stages
        refused += 1
    assert refused >= 40
    assert _fingerprint(embedded_url) == before
    assert not marker.exists()


def test_expensive_queries_are_stopped(
    embedded_url: str, demo_rows: warehouse.DemoRows, pg_graph: SchemaGraph
) -> None:
    ensure_reader_role(embedded_url)
    before = _fingerprint(embedded_url)
    for sql in EXPENSIVE:
        outcome = run_checked("embedded", sql, graph=pg_graph, limits=Limits(timeout_seconds=2))
        assert outcome.result is None, sql
        problems = [p.type for p in outcome.check.errors]
        if outcome.error is not None:
            problems.append(outcome.error.type)
        assert problems and set(problems) & {
            "explain_rejected",
            "timeout",
            "cartesian_join",
            "unknown_table",
        }, (sql, problems)
    assert _fingerprint(embedded_url) == before


def test_huge_values_stop_at_the_byte_cap(embedded_url: str, pg_graph: SchemaGraph) -> None:
    outcome = run_checked(
        "embedded", "SELECT repeat('x', 50000000)", graph=pg_graph, limits=Limits(max_bytes=10**6)
    )
    assert outcome.result is not None and outcome.result.rows == []
    assert outcome.result.truncated and "bytes" in (outcome.result.truncated_reason or "")


def test_guards_hold_without_the_static_check(
    embedded_url: str, demo_rows: warehouse.DemoRows
) -> None:
    """The Postgres guard alone (as the SELECT-only role, read-only, named cursor) refuses
    what the static policy would have refused first."""
    reader = ensure_reader_role(embedded_url)
    before = _fingerprint(embedded_url)
    for sql in [
        "SELECT 1; DELETE FROM shop.orders",
        "WITH x AS (DELETE FROM shop.orders RETURNING 1) SELECT * FROM x",
        "SELECT pg_read_file('/etc/passwd')",
        "SELECT nextval('pg_catalog.pg_class_oid_seq')",
        "SELECT * FROM shop.orders FOR UPDATE",
        "SELECT lo_import('/etc/passwd')",
        "SELECT set_config('role', 'postgres', false), current_setting('role')",
    ]:
        with pytest.raises(GuardedQueryError):
            result = run_postgres(reader, sql, Limits(timeout_seconds=2))
            # set_config inside a rolled-back, closed session cannot escape it: check it did not.
            assert result.rows[0][1] != "postgres"
            raise GuardedQueryError("postgres", "set_config stayed inside the session")
    with psycopg.connect(reader) as conn:
        assert conn.execute("SELECT current_user").fetchone() == ("schemawise_reader",)
    assert _fingerprint(embedded_url) == before


def test_reader_role_is_not_superuser(embedded_url: str) -> None:
    reader = ensure_reader_role(embedded_url)
    with psycopg.connect(reader) as conn:
        row = conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()
    assert row == (False,)


def test_superuser_urls_are_refused(embedded_url: str) -> None:
    outcome_error = None
    try:
        run_checked(embedded_url, "SELECT 1")
    except Exception as exc:
        outcome_error = exc
    assert outcome_error is not None and type(outcome_error).__name__ == "PermissionDeniedError"


@pytest.fixture()
def sqlite_copy(tmp_path: Path, bench_dir: Path) -> Path:
    target = tmp_path / "chinook.sqlite"
    target.write_bytes((bench_dir / "chinook" / "chinook.sqlite").read_bytes())
    return target


def _sqlite_fingerprint(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_hostile_sqlite_refused(sqlite_copy: Path) -> None:
    from schemawise.runner import load_graph

    url = f"sqlite:///{sqlite_copy}"
    graph = load_graph(url)
    before = _sqlite_fingerprint(sqlite_copy)
    files_before = set(sqlite_copy.parent.iterdir())
    statements = [*HOSTILE_SQLITE, *[s.replace("shop.", "") for s in HOSTILE_POSTGRES[:20]]]
    for sql in statements:
        outcome = run_checked(url, sql, graph=graph, limits=Limits(timeout_seconds=2))
        assert not outcome.ok and outcome.result is None, sql
    assert _sqlite_fingerprint(sqlite_copy) == before
    assert set(sqlite_copy.parent.iterdir()) == files_before


def test_sqlite_guard_alone(sqlite_copy: Path, tmp_path: Path) -> None:
    before = _sqlite_fingerprint(sqlite_copy)
    attached = tmp_path / "attached.db"
    for sql in [
        f"ATTACH DATABASE '{attached}' AS x",
        "SELECT load_extension('/nonexistent.so')",
        "DELETE FROM Album",
        "SELECT 1; DELETE FROM Album",
        "PRAGMA writable_schema = 1",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
    ]:
        with pytest.raises((GuardedQueryError, sqlite3.Error)):
            run_sqlite(str(sqlite_copy), sql, Limits(timeout_seconds=1))
    assert not attached.exists()
    assert _sqlite_fingerprint(sqlite_copy) == before


def test_duckdb_guard_alone(tmp_path: Path) -> None:
    import duckdb

    path = tmp_path / "w.duckdb"
    conn = duckdb.connect(str(path))
    conn.execute("CREATE TABLE t AS SELECT range AS x FROM range(10)")
    conn.close()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    for sql in [
        "DELETE FROM t",
        "SELECT * FROM read_csv('/etc/passwd')",
        "COPY t TO '/tmp/schemawise_copy.csv'",
        f"ATTACH '{tmp_path / 'other.duckdb'}' AS o",
        "INSTALL httpfs",
        "SET enable_external_access = true",
        "SELECT * FROM glob('/etc/*')",
        "SELECT 1; DELETE FROM t",
    ]:
        with pytest.raises(GuardedQueryError):
            run_duckdb(str(path), sql, Limits(timeout_seconds=2))
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert not Path("/tmp/schemawise_copy.csv").exists()
    assert not (tmp_path / "other.duckdb").exists()
    result = run_duckdb(str(path), "SELECT sum(x) FROM t", Limits())
    assert result.rows == [[45]]
