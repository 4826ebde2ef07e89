"""The second attack round (tests/integration/adversarial_cases.py) through `run`, on the three
engines. Every statement must be refused or contained within its deadline + 2 s; no answer may
hold another tenant's rows, a setting, a file's content or the server's paths; afterwards the
tables, roles, WAL and files are as they were, and a benign run going on all along was never
harmed."""

from __future__ import annotations

import hashlib
import json
import secrets
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import psycopg
import pytest

from schemawise.db.guard import Limits
from schemawise.errors import SchemawiseError
from schemawise.graph.model import SchemaGraph
from schemawise.runner import RunOutcome, load_graph, run_checked
from tests.integration import adversarial_cases as cases

DEADLINE = 1.5
GRACE = 2.0
LIMITS = Limits(max_rows=200, timeout_seconds=DEADLINE, max_bytes=1_000_000)
TABLE = "adv.notes"


@pytest.fixture(scope="module")
def secret_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    marker = "FILE-SECRET-" + secrets.token_hex(8)
    path = tmp_path_factory.mktemp("secret") / "secret.txt"
    path.write_text(marker)
    return path, marker


@pytest.fixture(scope="module")
def tenant_db(embedded_url: str) -> Iterator[dict[str, str]]:
    """Tenant 1 attacks; tenant 2's rows and a database-level setting hold secrets."""
    from schemawise.db.roles import ensure_reader_role
    from schemawise.db.tenancy import ensure_tenant_role
    from schemawise.rows.enable import enable

    tenant_secret = "TENANT2-SECRET-" + secrets.token_hex(8)
    setting_secret = "SETTING-SECRET-" + secrets.token_hex(8)
    with psycopg.connect(embedded_url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS adv CASCADE")
        conn.execute("CREATE SCHEMA adv")
        conn.execute(f"CREATE TABLE {TABLE} (id int PRIMARY KEY, tenant int NOT NULL, body text)")
        conn.execute(
            f"INSERT INTO {TABLE} SELECT g, 1 + g %% 2, CASE WHEN g %% 2 = 1 THEN %s "
            "ELSE 'note number ' || g END FROM generate_series(1, 400) g",
            (tenant_secret,),
        )
        database = conn.execute("SELECT current_database()").fetchone()
        assert database is not None
        conn.execute(f"ALTER DATABASE \"{database[0]}\" SET sw_test.secret = '{setting_secret}'")
        data_directory = conn.execute("SHOW data_directory").fetchone()
        assert data_directory is not None
    ensure_reader_role(embedded_url)
    enable("embedded", TABLE, ["body"], "tenant", row_security=True)
    ensure_tenant_role(embedded_url, 1)
    ensure_tenant_role(embedded_url, 2)
    yield {
        "tenant": tenant_secret,
        "setting": setting_secret,
        "data_directory": str(data_directory[0]),
    }
    from schemawise.rows.enable import disable

    disable("embedded", TABLE)  # other tests count the searchable tables
    with psycopg.connect(embedded_url, autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{database[0]}" RESET sw_test.secret')
        conn.execute("DROP SCHEMA adv CASCADE")


def _pg_state(admin: str) -> tuple[str, int, int]:
    """Checksum of the attacked tables, the number of roles, the WAL position."""
    digest = hashlib.sha256()
    with psycopg.connect(admin) as conn:
        for table in (TABLE, "schemawise.tenant_roles", "schemawise.rows_config"):
            row = conn.execute(
                f"SELECT count(*), md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) "
                f"FROM {table} t"
            ).fetchone()
            digest.update(f"{table}:{row}".encode())
        roles = conn.execute("SELECT count(*) FROM pg_roles").fetchone()
        lsn = conn.execute("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn").fetchone()
    assert roles is not None and lsn is not None
    return digest.hexdigest(), int(roles[0]), int(lsn[0])


def _run_backends(admin: str) -> list[tuple[object, ...]]:
    with psycopg.connect(admin, autocommit=True) as conn:
        return conn.execute(
            "SELECT pid, usename, state, left(query, 80) FROM pg_stat_activity "
            "WHERE usename LIKE 'schemawise%' AND pid <> pg_backend_pid()"
        ).fetchall()


class BenignLoop:
    """A run of tenant 2 repeated all along the attack: each answer must be whole and right."""

    def __init__(self, run: callable, expected: object) -> None:  # type: ignore[valid-type]
        self.run, self.expected = run, expected
        self.answers: list[object] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while not self.stop.is_set():
            self.answers.append(self.run())
            time.sleep(0.25)  # all along, but leaving the cores to the attack being timed

    def finish(self) -> list[object]:
        self.stop.set()
        self.thread.join(timeout=60)
        return self.answers


def _attack(url: str, case: cases.Case, graph: SchemaGraph, **kwargs: object) -> RunOutcome | str:
    try:
        return run_checked(url, case.sql, graph=graph, limits=LIMITS, **kwargs)  # type: ignore[arg-type]
    except SchemawiseError as exc:  # a refusal with a hint (e.g. too many sw_match calls)
        return f"refused: {exc}"


def _check_contained(case: cases.Case, outcome: RunOutcome | str, elapsed: float,
                     markers: list[str]) -> None:  # fmt: skip
    assert elapsed < DEADLINE + GRACE, (case, elapsed)
    text = outcome if isinstance(outcome, str) else json.dumps(outcome.to_dict(), default=str)
    for marker in markers:
        assert marker not in text, (case, marker)
    if isinstance(outcome, RunOutcome) and outcome.result is not None:
        # Contained, not refused: only a bounded answer may come back.
        assert len(outcome.result.rows) <= LIMITS.max_rows, case


def test_postgres_round(
    embedded_url: str, tenant_db: dict[str, str], secret_file: tuple[Path, str]
) -> None:
    graph = load_graph("embedded")
    path, file_marker = secret_file
    markers = [tenant_db["tenant"], tenant_db["setting"], tenant_db["data_directory"], file_marker]
    expected = [[200]]
    benign = BenignLoop(
        lambda: (
            run_checked(
                "embedded", f"SELECT count(*) FROM {TABLE}", graph=graph, tenant=2
            ).result.rows
        ),  # type: ignore[union-attr]
        expected,
    )
    before = _pg_state(embedded_url)
    try:
        for case in cases.POSTGRES:
            sql = case.sql.replace("{T}", TABLE).replace("{SECRET_FILE}", str(path))
            started = time.monotonic()
            outcome = _attack("embedded", cases.Case(case.engine, case.kind, sql), graph, tenant=1)
            _check_contained(case, outcome, time.monotonic() - started, markers)
    finally:
        answers = benign.finish()
    after = _pg_state(embedded_url)
    assert after[:2] == before[:2]
    # No backend outlives its run (a killed client's backend notices within a second).
    waited = time.monotonic() + 10
    while (left := _run_backends(embedded_url)) and time.monotonic() < waited:
        time.sleep(0.2)
    assert left == []
    assert after[2] - before[2] < 2_000_000  # WAL: a read-only round writes next to nothing
    assert answers and all(a == expected for a in answers), answers[:5]
    assert path.read_text() == file_marker


def _files(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


@pytest.fixture()
def sqlite_db(tmp_path: Path, bench_dir: Path) -> Path:
    target = tmp_path / "db" / "chinook.sqlite"
    target.parent.mkdir(exist_ok=True)
    shutil.copy(bench_dir / "chinook" / "chinook.sqlite", target)
    return target


@pytest.fixture()
def duckdb_db(tmp_path: Path) -> Path:
    target = tmp_path / "db" / "w.duckdb"
    target.parent.mkdir(exist_ok=True)
    conn = duckdb.connect(str(target))
    conn.execute("CREATE TABLE t AS SELECT range AS x, 'row ' || range AS label FROM range(1000)")
    conn.execute("CREATE SEQUENCE s")
    conn.close()
    return target


@pytest.mark.parametrize("engine", ["sqlite", "duckdb"])
def test_file_engine_round(
    engine: str, sqlite_db: Path, duckdb_db: Path, secret_file: tuple[Path, str]
) -> None:
    path = sqlite_db if engine == "sqlite" else duckdb_db
    url = f"{engine}:///{path}"
    graph = load_graph(url)
    secret_path, marker = secret_file
    benign_sql = "SELECT count(*) FROM Album" if engine == "sqlite" else "SELECT count(*) FROM t"
    expected = run_checked(url, benign_sql, graph=graph).result.rows  # type: ignore[union-attr]
    files_before = _files(path.parent)
    benign = BenignLoop(
        lambda: run_checked(url, benign_sql, graph=graph).result.rows,  # type: ignore[union-attr]
        expected,
    )
    try:
        for case in cases.SQLITE if engine == "sqlite" else cases.DUCKDB:
            sql = case.sql.replace("{DB}", str(path)).replace("{SECRET_FILE}", str(secret_path))
            started = time.monotonic()
            outcome = _attack(url, cases.Case(case.engine, case.kind, sql), graph)
            _check_contained(case, outcome, time.monotonic() - started, [marker])
    finally:
        answers = benign.finish()
    assert _files(path.parent) == files_before
    assert answers and all(a == expected for a in answers), answers[:5]


def test_the_round_covers_every_class_and_engine() -> None:
    assert len(cases.ALL) >= 60
    for engine in ("postgres", "sqlite", "duckdb"):
        kinds = {c.kind for c in cases.ALL if c.engine == engine}
        assert len(kinds) >= 6, (engine, kinds)
    assert {c.kind for c in cases.ALL} == set(cases.CLASSES)
