"""SQLite and DuckDB runs in a killable child process (db/sandbox.py): the same answers as the
in-process engines, every attack of the first round ended within its deadline + 2 s or cut by
a cap, no value larger than the byte cap ever in the parent's memory, no child left behind, and
the database file and its folder unchanged after every hostile run."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import pickle
import shutil
import signal
import sqlite3
import threading
import time
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import psutil
import pytest

from schemawise.db.duckdb import open_read_only
from schemawise.db.guard import (
    CONNECTION_LOST,
    RESOURCE_LIMIT,
    TIMEOUT,
    Deadline,
    GuardedQueryError,
    Limits,
    QueryResult,
    explain_duckdb,
    explain_sqlite,
    run_duckdb,
    run_sqlite,
)
from schemawise.db.sandbox import (
    SandboxLimits,
    SandboxSession,
    _BrokenError,
    _Channel,
    _SafeUnpickler,
)
from schemawise.db.sandbox_worker import HEADER
from schemawise.validate.errors import classify

GRACE = 2.0  # a hostile run must end within its deadline + this
ENDLESS = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
CHINOOK = Path(__file__).resolve().parents[3] / "shared" / "bench" / "chinook" / "chinook.sqlite"


@pytest.fixture()
def chinook(tmp_path: Path) -> Path:
    if not CHINOOK.is_file():
        pytest.skip(f"Chinook not found at {CHINOOK}")
    target = tmp_path / "sqlite" / "chinook.sqlite"
    target.parent.mkdir()
    shutil.copy(CHINOOK, target)
    return target


@pytest.fixture()
def duck(tmp_path: Path) -> Path:
    target = tmp_path / "duckdb" / "w.duckdb"
    target.parent.mkdir()
    conn = duckdb.connect(str(target))
    conn.execute("CREATE TABLE t AS SELECT range AS x, 'row ' || range AS label FROM range(1000)")
    conn.close()
    return target


def _state(path: Path) -> tuple[str, list[str]]:
    """The file's checksum and its folder's listing."""
    return hashlib.sha256(path.read_bytes()).hexdigest(), sorted(os.listdir(path.parent))


def _children() -> set[int]:
    return {c.pid for c in psutil.Process().children(recursive=True)}


@pytest.fixture(autouse=True)
def no_child_left() -> Iterator[None]:
    """Every test: no child process of ours survives it, not even as a zombie."""
    before = _children()
    yield
    gc.collect()
    assert _children() - before == set()


# --- the same answers as in-process ---------------------------------------------------------


def test_sqlite_rows_as_in_process(chinook: Path) -> None:
    sql = "SELECT a.AlbumId, a.Title, r.Name FROM Album a JOIN Artist r USING (ArtistId) ORDER BY 1"
    with sqlite3.connect(f"file:{chinook}?mode=ro", uri=True) as conn:
        cursor = conn.execute(sql)
        expected = [list(r) for r in cursor.fetchall()]
        columns = [d[0] for d in cursor.description]
    result = run_sqlite(str(chinook), sql, Limits(max_rows=1000))
    assert (result.columns, result.rows, result.truncated) == (columns, expected, False)
    assert len(expected) == 347


def test_duckdb_rows_and_types_as_in_process(duck: Path) -> None:
    sql = (
        "SELECT x, label, x::DECIMAL(10, 2) AS d, TIMESTAMP '2024-01-02 03:04:05' + x * "
        "INTERVAL 1 DAY AS ts, TIMESTAMPTZ '2024-01-02 03:04:05+02' AS tz, INTERVAL 3 DAY AS i, "
        "'2f1a4c3e-0b1d-4c7e-9a55-7c1e9d3f6b21'::UUID AS u, [x, x + 1] AS l, {'a': x} AS s, "
        "'\\x00\\xff'::BLOB AS b, NULL AS n FROM t WHERE x < 50 ORDER BY x"
    )
    conn = open_read_only(str(duck))
    try:
        cursor = conn.execute(sql)
        expected = [list(r) for r in cursor.fetchall()]
    finally:
        conn.close()
    # Lists, maps and structs come back as their JSON text (counted exactly; as objects they
    # took about 20 times their counted size in the parent).
    expected = [
        [json.dumps(v) if isinstance(v, list | dict) else v for v in row] for row in expected
    ]
    result = run_duckdb(str(duck), sql, Limits())
    assert result.rows == expected and len(expected) == 50
    assert result.columns[:3] == ["x", "label", "d"]


def test_explain_shapes_and_one_child_per_session(chinook: Path, duck: Path) -> None:
    plan = explain_sqlite(str(chinook), "SELECT * FROM Album a JOIN Artist r USING (ArtistId)", 5)
    assert isinstance(plan, list) and any(p.startswith(("SCAN", "SEARCH")) for p in plan)
    text = explain_duckdb(str(duck), "SELECT sum(x) FROM t")
    assert isinstance(text, str) and "Seq Scan" in text
    with SandboxSession("sqlite", str(chinook), Limits(), Deadline.after(5)) as session:
        pid = session.pid
        session.explain("SELECT count(*) FROM Track")
        result = session.execute("SELECT count(*) FROM Track WHERE AlbumId = :a", {"a": 1})
        assert session.pid == pid  # EXPLAIN and execution in the same child
    assert result.rows == [[10]] and pid not in _children()


def test_engine_errors_keep_the_engine_message(chinook: Path, duck: Path) -> None:
    with pytest.raises(GuardedQueryError) as caught:
        run_sqlite(str(chinook), "SELECT nope FROM Album", Limits())
    assert "no such column: nope" in caught.value.message and caught.value.kind is None
    assert classify("sqlite", caught.value.message, caught.value.sqlstate).type == "unknown_column"
    with pytest.raises(GuardedQueryError) as caught:
        run_duckdb(str(duck), "SELECT nope FROM t", Limits())
    assert classify("duckdb", caught.value.message, caught.value.sqlstate).type == "unknown_column"
    for run, path in ((run_sqlite, chinook), (run_duckdb, duck)):
        before = _state(path)
        with pytest.raises(GuardedQueryError):
            run(str(path), "SELECT 1; SELECT 2", Limits())  # exactly one statement
        with pytest.raises(GuardedQueryError):  # read-only: a missing file is not created
            run(str(path.with_name("missing.db")), "SELECT 1", Limits())
        assert _state(path) == before


# --- attacks: ended within the deadline + 2 s, or cut by a cap ---------------------------------


@dataclass(frozen=True)
class Attack:
    engine: str
    sql: str
    expect: str  # "timeout", "truncated", "refused" (an engine error), or "contained" (any)
    explain: bool = False
    deadline: float = 1.0  # short where the run is expected to last until the deadline


ATTACKS = [
    # One SQLite function call of minutes (its progress handler never runs inside it).
    Attack("sqlite", "SELECT instr(printf('%.*c', 9000000, 'a'), printf('%.*c', 100000, 'a') "
           "|| 'b')", "timeout"),
    Attack("sqlite", "SELECT instr(printf('%.*c', 3000000, 'a'), 'b')", "contained"),
    Attack("sqlite", ENDLESS, "timeout"),
    Attack("sqlite", "SELECT zeroblob(1000000000)", "refused", deadline=5),
    Attack("sqlite", "SELECT randomblob(900000000)", "refused", deadline=5),
    Attack("sqlite", "SELECT printf('%.*c', 50000000, 'x')", "contained", deadline=5),  # NULL
    Attack("sqlite", "SELECT printf('%.*c', 9000000, 'x')", "truncated", deadline=5),
    Attack("sqlite", "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r "
           "WHERE n < 1000000) SELECT n FROM r", "truncated", deadline=5),
    # DuckDB folds constants while planning: EXPLAIN itself runs the function.
    Attack("duckdb", "SELECT levenshtein(repeat('a', 150000), repeat('b', 150000))", "timeout",
           explain=True),
    Attack("duckdb", "SELECT levenshtein(repeat('a', 150000), repeat('b', 150000))", "timeout"),
    Attack("duckdb", "SELECT count(*) FROM range(10000000000)", "contained"),
    Attack("duckdb", "SELECT repeat('x', 100000000)", "truncated", deadline=5),
    Attack("duckdb", "SELECT repeat('x', 50000000)", "truncated", deadline=5),
    Attack("duckdb", "SELECT * FROM range(1000000)", "truncated", deadline=5),
]  # fmt: skip


def _outcome(attack: Attack, path: Path, limits: Limits) -> QueryResult | GuardedQueryError:
    try:
        with SandboxSession(attack.engine, str(path), limits, Deadline.after(attack.deadline)) as s:
            if attack.explain:
                s.explain(attack.sql)
            return s.execute(attack.sql)
    except GuardedQueryError as exc:
        return exc


@pytest.mark.parametrize("attack", ATTACKS, ids=[f"{a.engine}:{a.sql[:40]}" for a in ATTACKS])
def test_attack_contained(attack: Attack, chinook: Path, duck: Path) -> None:
    path = chinook if attack.engine == "sqlite" else duck
    before = _state(path)
    limits = Limits(max_rows=1000, timeout_seconds=attack.deadline, max_bytes=1_000_000)
    started = time.monotonic()
    outcome = _outcome(attack, path, limits)
    elapsed = time.monotonic() - started
    assert elapsed < attack.deadline + GRACE, (attack, elapsed, outcome)
    if attack.expect == "timeout":
        assert isinstance(outcome, GuardedQueryError), outcome
        assert (outcome.kind, outcome.sqlstate) == (TIMEOUT, "57014"), outcome.message
    elif attack.expect == "truncated":
        # The byte or row cap, or DuckDB's own memory limit before any row exists.
        if isinstance(outcome, GuardedQueryError):
            assert outcome.kind == RESOURCE_LIMIT, outcome.message
        else:
            assert outcome.truncated and len(outcome.rows) <= limits.max_rows
    elif attack.expect == "refused":
        assert isinstance(outcome, GuardedQueryError) and outcome.kind is None, outcome
    else:
        assert isinstance(outcome, GuardedQueryError) or len(outcome.rows) <= limits.max_rows
    assert _state(path) == before


# --- memory: a value larger than the byte cap never reaches the parent -------------------------


@pytest.mark.parametrize(
    ("engine", "sql", "value_bytes"),
    [
        ("sqlite", "SELECT printf('%.*c', 9000000, 'x')", 9_000_000),
        ("duckdb", "SELECT repeat('x', 50000000)", 50_000_000),
        ("duckdb", "SELECT repeat('x', 100000) FROM range(100)", 10_000_000),
    ],
)
def test_parent_memory_stays_under_the_cap(
    engine: str, sql: str, value_bytes: int, chinook: Path, duck: Path
) -> None:
    path = chinook if engine == "sqlite" else duck
    limits = Limits(max_rows=1000, timeout_seconds=10, max_bytes=1_000_000)
    tracemalloc.start()
    try:
        result = (
            run_sqlite(str(path), sql, limits)
            if engine == "sqlite"
            else run_duckdb(str(path), sql, limits)
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # With no row kept the reason says the first row is over the cap: "0 rows, truncated"
    # alone reads as a query that found nothing.
    assert result.truncated and result.truncated_reason == (
        "more than 1,000,000 bytes"
        if result.rows
        else "the first row alone is over the cap of 1,000,000 bytes: no row is shown"
    )
    assert sum(len(r[0]) for r in result.rows) <= limits.max_bytes
    # Every allocation of the parent while the rows arrived: the rows kept (≤ the cap), one
    # message at a time, never the value the child computed.
    assert peak < 3 * limits.max_bytes < value_bytes, peak


# --- the child: its limits, its death, its reaping ----------------------------------------------


def test_child_limits_and_environment(chinook: Path) -> None:
    box = SandboxLimits()
    with SandboxSession("sqlite", str(chinook), Limits(), Deadline.after(5), box) as session:
        assert session.pid is not None
        child = psutil.Process(session.pid)
        assert child.rlimit(psutil.RLIMIT_AS) == (box.memory_bytes, box.memory_bytes)
        assert child.rlimit(psutil.RLIMIT_FSIZE) == (0, 0)
        assert child.rlimit(psutil.RLIMIT_NOFILE) == (box.open_files, box.open_files)
        assert child.rlimit(psutil.RLIMIT_CORE) == (0, 0)
        soft, hard = child.rlimit(psutil.RLIMIT_CPU)
        assert 2 <= soft <= 5 + 1 + box.cpu_grace_seconds and hard == soft + 1
        assert "PATH" not in child.environ() and child.cwd() == "/"
        assert session.execute("SELECT 1").rows == [[1]]


def test_duckdb_child_has_every_setting_of_open_read_only(duck: Path) -> None:
    """The worker repeats open_read_only's settings: none may be missing or different."""

    def settings(conn: duckdb.DuckDBPyConnection) -> dict[str, str]:
        rows = conn.execute("SELECT name, value FROM duckdb_settings()").fetchall()
        return {name: str(value) for name, value in rows}

    defaults: dict[str, str] = {}
    for opener in (lambda p: duckdb.connect(p, read_only=True), open_read_only):
        conn = opener(str(duck))  # one at a time: DuckDB refuses two configurations of a file
        try:
            found = settings(conn)
        finally:
            conn.close()
        defaults = defaults or found
    wanted = {k: v for k, v in found.items() if defaults.get(k) != v}
    assert "enable_external_access" in wanted
    sql = "SELECT name, value FROM duckdb_settings()"
    got = {name: str(value) for name, value in run_duckdb(str(duck), sql, Limits()).rows}
    # The worker's own: one thread, a memory limit, no temporary directory (so DuckDB allows
    # no directory at all, where open_read_only allows its `<file>.tmp/`).
    own = {"threads": "1", "temp_directory": "", "allowed_directories": "[]"}
    assert {k: got.get(k) for k in wanted if k not in own} == {
        k: v for k, v in wanted.items() if k not in own
    }
    assert {k: got[k] for k in own} == own and got["memory_limit"] == "512.0 MiB"


@pytest.mark.parametrize("engine", ["sqlite", "duckdb"])
def test_child_killed_from_outside_is_connection_lost(
    engine: str, chinook: Path, duck: Path
) -> None:
    path = chinook if engine == "sqlite" else duck
    before = _state(path)
    with SandboxSession(engine, str(path), Limits(), Deadline.after(10)) as session:
        assert session.pid is not None
        killer = threading.Timer(0.3, os.kill, (session.pid, signal.SIGKILL))
        killer.start()
        started = time.monotonic()
        with pytest.raises(GuardedQueryError) as caught:
            session.execute(ENDLESS)
        killer.join()
        assert caught.value.kind == CONNECTION_LOST and time.monotonic() - started < 3
        with pytest.raises(GuardedQueryError):  # the session stays failed
            session.execute("SELECT 1")
    assert _state(path) == before


def test_child_killed_between_requests(chinook: Path) -> None:
    with SandboxSession("sqlite", str(chinook), Limits(), Deadline.after(10)) as session:
        session.explain("SELECT 1")
        assert session.pid is not None
        os.kill(session.pid, signal.SIGKILL)
        with pytest.raises(GuardedQueryError) as caught:
            session.execute("SELECT 1")
    assert caught.value.kind == CONNECTION_LOST


def _error(engine: str, path: Path, sql: str, box: SandboxLimits | None = None,
           seconds: float = 10) -> GuardedQueryError:  # fmt: skip
    session = SandboxSession(engine, str(path), Limits(), Deadline.after(seconds), box)
    with pytest.raises(GuardedQueryError) as caught, session:
        session.execute(sql)
    return caught.value


def test_resource_limits_are_reported(chinook: Path, duck: Path) -> None:
    # DuckDB's memory_limit inside RLIMIT_AS: a clean "Out of Memory Error".
    sql = "SELECT length(string_agg(repeat('x', 1000000), '')) FROM range(2000)"
    error = _error("duckdb", duck, sql, SandboxLimits(duckdb_memory_mib=64))
    assert error.kind == RESOURCE_LIMIT and "Out of Memory" in error.message
    # SQLite sorting in memory up to RLIMIT_AS (temporary files are off: RLIMIT_FSIZE is 0).
    sql = (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 400000) "
        "SELECT n, printf('%.*c', 1000, 'x') FROM r ORDER BY random()"
    )
    assert _error("sqlite", chinook, sql, SandboxLimits(memory_bytes=256 << 20)).kind == (
        RESOURCE_LIMIT
    )
    # The kernel's signal for RLIMIT_CPU (sent here by hand: the limit is above the deadline).
    with SandboxSession("sqlite", str(chinook), Limits(), Deadline.after(10)) as session:
        assert session.pid is not None
        threading.Timer(0.3, os.kill, (session.pid, signal.SIGXCPU)).start()
        with pytest.raises(GuardedQueryError) as caught:
            session.execute(ENDLESS)
    assert caught.value.kind == RESOURCE_LIMIT


def test_close_always_reaps(chinook: Path) -> None:
    session = SandboxSession("sqlite", str(chinook), Limits(), Deadline.after(10))
    with pytest.raises(KeyboardInterrupt), session:
        pid = session.pid
        raise KeyboardInterrupt
    assert pid is not None and pid not in _children()
    # A session nobody closed: its finalizer kills and reaps the child.
    forgotten = SandboxSession("sqlite", str(chinook), Limits(), Deadline.after(10))
    forgotten.explain("SELECT 1")
    pid = forgotten.pid
    del forgotten
    gc.collect()
    assert pid is not None and pid not in _children()


def test_deadline_passed_before_start(chinook: Path) -> None:
    assert _error("sqlite", chinook, "SELECT 1", seconds=0).kind == TIMEOUT


def test_replies_are_data_not_code() -> None:
    """A child that sends a pickle naming any other class is refused (never imported)."""
    import io

    for payload in (pickle.dumps(SandboxLimits()), pickle.dumps(os.system)):
        with pytest.raises(pickle.UnpicklingError):
            _SafeUnpickler(io.BytesIO(payload)).load()
    value: Any = _SafeUnpickler(io.BytesIO(pickle.dumps([1, "x", b"y", None]))).load()
    assert value == [1, "x", b"y", None]


def test_oversized_reply_refused_before_it_is_read() -> None:
    """A length above the limit ends the session without reading (or allocating) the body."""
    requests, replies = os.pipe(), os.pipe()
    try:
        os.write(replies[1], HEADER.pack(1 << 40))
        channel = _Channel(requests[1], replies[0])
        with pytest.raises(_BrokenError):
            channel.recv(1_000_000, Deadline.after(5))
    finally:
        for fd in (*requests, *replies):
            os.close(fd)
