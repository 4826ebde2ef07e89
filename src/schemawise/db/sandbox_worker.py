"""The child process that runs SQLite and DuckDB queries for `db/sandbox.py` (SECURITY.md L6–L7).

Started as `python -I -B <this file>` with an empty environment, stdin and stdout as pipes to the
parent. It reads one configuration, lowers its own resource limits, opens the database and then
answers `explain` and `execute` requests until the parent closes stdin or kills it.

Why a script and not `-m schemawise.db.sandbox_worker`: importing any module of the package runs
`schemawise/__init__.py`, which imports the whole context engine (about 0.5 s on this machine).
`_bootstrap_package` registers empty package modules instead, so that only the few modules the
child needs are imported. This file imports the standard library only at module level, and the
parent imports the framing helpers and `SandboxLimits` from it.

Replies hold only plain values (see `plain`): the parent unpickles them with an allow-list of
classes, so a compromised child cannot make the parent run code.

Start-up time is the cost of every run, so the child imports what its engine needs only
(`threading`, `decimal` and `uuid` for DuckDB; measured: `dataclasses`, which db/guard.py
imports, is the largest remaining import at ~16 ms).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import pickle
import resource
import signal
import struct
import sys
import time
import types
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

# Kinds, as in db/guard.py (not imported here: the parent imports this module at start-up).
TIMEOUT = "timeout"
RESOURCE_LIMIT = "resource_limit"

HEADER = struct.Struct(">Q")  # every message: its length, then a pickle
EXIT_OUT_OF_MEMORY = 3  # the child ran out of memory where it could not even reply
CHUNK_BYTES = 64 * 1024  # rows travel in chunks of about this many counted bytes …
CHUNK_ROWS = 256  # … or this many rows, whichever comes first
MAX_PLAN_BYTES = 1_000_000  # an EXPLAIN text larger than this is refused, not sent
MAX_MESSAGE_CHARS = 10_000  # of an engine's error message (DuckDB's may quote the whole SQL)


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits of the child, on top of the run's `Limits` and `Deadline`."""

    memory_bytes: int = 2 << 30  # RLIMIT_AS: DuckDB reserves address space generously
    duckdb_memory_mib: int = 512  # DuckDB's memory_limit, well inside RLIMIT_AS: it fails cleanly
    open_files: int = 32  # RLIMIT_NOFILE: the database file, a few pipes and DuckDB's own
    file_size_bytes: int = 0  # RLIMIT_FSIZE: the child never writes a file
    cpu_grace_seconds: int = 1  # RLIMIT_CPU = whole seconds left until the deadline + this
    kill_grace_seconds: float = 0.2  # SIGTERM, then SIGKILL after this long

    def to_wire(self) -> dict[str, Any]:
        return asdict(self)


# --- framing (both sides) -------------------------------------------------------------------


def pack(message: Any) -> bytes:
    payload = pickle.dumps(message, protocol=5)
    return HEADER.pack(len(payload)) + payload


def _read_exact(fd: int, size: int) -> bytes:
    buffer = bytearray(size)
    view = memoryview(buffer)
    done = 0
    while done < size:
        got = os.readv(fd, [view[done:]])
        if got == 0:
            raise EOFError
        done += got
    return bytes(buffer)


def read_message(fd: int) -> Any:
    """Blocking read of one message from the parent (which the child trusts)."""
    (size,) = HEADER.unpack(_read_exact(fd, HEADER.size))
    return pickle.loads(_read_exact(fd, size))


def write_message(fd: int, message: Any) -> None:
    data = memoryview(pack(message))
    while data:
        data = data[os.write(fd, data) :]


# --- values ---------------------------------------------------------------------------------

# Value types passed on as they are; DuckDB adds Decimal and UUID (see _DuckDB).
_KEPT: set[type] = {type(None), bool, int, float, str, bytes, dt.date, dt.timedelta}


def plain(value: Any) -> Any:
    """The value as types the parent's unpickler allows; anything else becomes its text.

    Exact type checks: a subclass could pickle itself as anything."""
    kind = type(value)
    if kind in _KEPT:
        return value
    if kind is dt.datetime or kind is dt.time:
        tz = value.tzinfo
        if tz is None or type(tz) is dt.timezone:
            return value
        offset = value.utcoffset()  # a zone (zoneinfo, pytz) becomes its fixed offset
        return value.replace(tzinfo=dt.timezone(offset)) if offset is not None else str(value)
    if kind is list or kind is tuple or kind is dict:
        # Nested values (DuckDB lists, maps, structs) travel as JSON text: as Python objects
        # they took about 20 times their counted size in the parent (an outside attack held
        # 200 MB under a 10 MB cap), and text is counted exactly.
        return json.dumps(_nested(value), default=str, ensure_ascii=False)
    if kind is bytearray or kind is memoryview:
        return bytes(value)
    return str(value)


def _nested(value: Any) -> Any:
    """Containers kept as JSON containers, everything else as a plain value or its text."""
    kind = type(value)
    if kind is list or kind is tuple:
        return [_nested(v) for v in value]
    if kind is dict:
        return {str(k): _nested(v) for k, v in value.items()}
    out = plain(value)
    return out if type(out) in (type(None), bool, int, float, str) else str(out)


# --- the child ------------------------------------------------------------------------------


class _FailureError(Exception):
    """A reply of kind `error`: the engine's message, and what the guard knows about it."""

    def __init__(self, message: str, sqlstate: str | None = None, kind: str | None = None):
        super().__init__(message)
        self.message = message[:MAX_MESSAGE_CHARS]  # a reply must fit a small byte cap
        self.sqlstate, self.kind = sqlstate, kind


def _bootstrap_package() -> None:
    """Empty `schemawise`, `schemawise.db` and validate packages pointing at this source tree,
    so that `import schemawise.db.guard` skips the package's heavy `__init__` (module doc)."""
    db_dir = os.path.dirname(os.path.realpath(__file__))
    root = os.path.dirname(db_dir)
    validate_dir = os.path.join(root, "validate")
    # validate.functions too: its __init__ brings sqlglot (~110 ms), and SQLite's authorizer
    # needs only the allow-list reader (validate/functions/lists.py).
    for name, where in (
        ("schemawise", root),
        ("schemawise.db", db_dir),
        ("schemawise.validate", validate_dir),
        ("schemawise.validate.functions", os.path.join(validate_dir, "functions")),
    ):
        if name not in sys.modules:
            package = types.ModuleType(name)
            package.__path__ = [where]
            sys.modules[name] = package


def _apply_rlimits(box: SandboxLimits, deadline_at: float, cpu: int) -> None:
    """Hard limits too, so that nothing in the child can raise them again."""
    remaining = max(0.0, deadline_at - time.monotonic())
    for limit, value in (
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_FSIZE, box.file_size_bytes),
        (resource.RLIMIT_NOFILE, box.open_files),
        (resource.RLIMIT_AS, box.memory_bytes),
    ):
        resource.setrlimit(limit, (value, value))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))  # SIGXCPU, then SIGKILL
    # Python ignores SIGXFSZ; the default kills the child, which the parent reports as a limit.
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    # A kernel timer ends the child one second after the deadline even if the parent is gone
    # (SIGALRM's default action terminates; no Python handler, so no GIL is needed).
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.setitimer(signal.ITIMER_REAL, remaining + 1.0)


class _Engine:
    """One open database in the child: `explain`, and `execute` that yields rows."""

    def explain(self, sql: str) -> Any:
        raise NotImplementedError

    def execute(self, sql: str, params: Any) -> tuple[list[str], Callable[[int], Sequence[Any]]]:
        raise NotImplementedError

    def finish(self) -> None:
        """After a request: the statement is over (for DuckDB: its interrupt timer)."""


def _uri_path(path: str) -> str:
    """The path inside a file: URI: a `?` or `#` in a file name must not start a query (which
    could set `mode=rw`) or a fragment, and `%` must not start an escape."""
    return path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")


class _SQLite(_Engine):
    def __init__(self, path: str, deadline_at: float) -> None:
        import sqlite3

        from schemawise.db.sqlite_policy import apply_limits, authorizer

        self.sqlite3 = sqlite3
        try:
            # As db/guard.py did in-process: read-only URI, limits, authorizer, progress handler.
            self.conn = sqlite3.connect(f"file:{_uri_path(path)}?mode=ro", uri=True)
            apply_limits(self.conn)
            # Sorts and temporary tables in memory: the child may not write files (RLIMIT_FSIZE
            # 0), and memory is bounded by RLIMIT_AS. Set before the authorizer denies pragmas.
            self.conn.execute("PRAGMA temp_store = MEMORY")
            self.conn.set_authorizer(authorizer)
        except sqlite3.Error as exc:
            raise self._failure(exc) from None
        # A first line only: SQLite checks this between opcodes, not inside one function call;
        # the parent's kill at the deadline is what bounds the run.
        self.conn.set_progress_handler(lambda: int(time.monotonic() > deadline_at), 1000)

    def _failure(self, exc: BaseException) -> _FailureError:
        code = getattr(exc, "sqlite_errorcode", None)
        if code == self.sqlite3.SQLITE_INTERRUPT:
            return _FailureError(str(exc), "57014", TIMEOUT)
        if code == self.sqlite3.SQLITE_NOMEM:
            return _FailureError(str(exc), None, RESOURCE_LIMIT)
        return _FailureError(str(exc))

    def explain(self, sql: str) -> list[str]:
        try:
            rows = self.conn.execute("EXPLAIN QUERY PLAN " + sql).fetchall()
        except (self.sqlite3.Error, self.sqlite3.Warning) as exc:
            raise self._failure(exc) from None
        return [str(r[-1]) for r in rows]

    def execute(self, sql: str, params: Any) -> tuple[list[str], Callable[[int], Sequence[Any]]]:
        try:
            # execute() runs one statement and refuses a second (never executescript).
            cursor = self.conn.execute(sql, params) if params else self.conn.execute(sql)
        except (self.sqlite3.Error, self.sqlite3.Warning) as exc:
            raise self._failure(exc) from None

        def fetch(n: int) -> Sequence[Any]:
            try:
                return cursor.fetchmany(n)
            except (self.sqlite3.Error, self.sqlite3.Warning) as exc:
                raise self._failure(exc) from None

        return [d[0] for d in cursor.description or []], fetch


# The settings of schemawise.db.duckdb.open_read_only (SECURITY.md L6), repeated here because
# importing that module costs ~60 ms of pydantic per run and its connect() takes no extra
# settings; tests/integration/test_sandbox.py checks that none of them is missing.
_DUCKDB_READ_ONLY: dict[str, str | bool | int | float | list[str]] = {
    "enable_external_access": False,
    "autoload_known_extensions": False,
    "autoinstall_known_extensions": False,
    "lock_configuration": True,
}


class _DuckDB(_Engine):
    def __init__(self, path: str, deadline_at: float, box: SandboxLimits) -> None:
        import decimal
        import threading
        import uuid

        import duckdb

        _KEPT.update((decimal.Decimal, uuid.UUID))
        self.threading = threading

        self.duckdb = duckdb
        self.deadline_at = deadline_at
        self.timer: Any = None  # a threading.Timer while a statement runs
        config: dict[str, str | bool | int | float | list[str]] = {
            **_DUCKDB_READ_ONLY,
            "threads": 1,  # CPU time ≈ wall time, so RLIMIT_CPU cannot end a run early
            "memory_limit": f"{box.duckdb_memory_mib}MiB",  # fails with "Out of Memory Error"
            "temp_directory": "",  # no spilling: the child writes no files
        }
        try:
            self.conn = duckdb.connect(path, read_only=True, config=config)
        except duckdb.Error as exc:
            raise self._failure(exc) from None

    def _failure(self, exc: BaseException) -> _FailureError:
        if isinstance(exc, self.duckdb.InterruptException):
            return _FailureError(str(exc), "57014", TIMEOUT)
        if isinstance(exc, self.duckdb.OutOfMemoryException):
            return _FailureError(str(exc), None, RESOURCE_LIMIT)
        return _FailureError(str(exc))

    def _one_statement(self, sql: str) -> None:
        try:
            statements = self.duckdb.extract_statements(sql)
        except self.duckdb.Error as exc:
            raise self._failure(exc) from None
        if len(statements) != 1:
            raise _FailureError(f"exactly one statement allowed, got {len(statements)}")

    def _arm(self) -> None:
        # A first line only: DuckDB has no statement timeout, and constant folding while
        # planning does not see the interrupt; the parent's kill bounds the run.
        self.finish()
        self.timer = self.threading.Timer(
            max(0.0, self.deadline_at - time.monotonic()), self.conn.interrupt
        )
        self.timer.daemon = True
        self.timer.start()

    def finish(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def explain(self, sql: str) -> str:
        self._one_statement(sql)
        self._arm()
        try:
            rows = self.conn.execute("EXPLAIN " + sql).fetchall()
        except self.duckdb.Error as exc:
            raise self._failure(exc) from None
        return "\n".join(str(r[-1]) for r in rows)

    def execute(self, sql: str, params: Any) -> tuple[list[str], Callable[[int], Sequence[Any]]]:
        self._one_statement(sql)
        self._arm()
        try:
            cursor = self.conn.execute(sql, params) if params else self.conn.execute(sql)
        except self.duckdb.Error as exc:
            raise self._failure(exc) from None

        def fetch(n: int) -> Sequence[Any]:
            try:
                return cursor.fetchmany(n)
            except self.duckdb.Error as exc:
                raise self._failure(exc) from None

        return [d[0] for d in cursor.description or []], fetch


def _row_messages(
    fetch: Callable[[int], Sequence[Any]],
    row_bytes: Callable[[Sequence[Any]], int],
    max_rows: int,
    max_bytes: int,
) -> Iterator[tuple[Any, ...]]:
    """`rows` chunks, then `end` with why the rows stopped: None, "rows" (one more row
    existed) or "bytes" (the next row would pass the byte cap; it is never sent)."""
    sent_rows = sent_bytes = 0
    chunk: list[Any] = []
    chunk_bytes = 0
    batch = 1  # the first row alone: its size is unknown
    end: str | None = None
    while end is None:
        rows = fetch(batch)
        if not rows:
            break
        for row in rows:
            if sent_rows == max_rows:
                end = "rows"
                break
            kept = [plain(v) for v in row]  # counted as the parent will hold it
            size = row_bytes(kept)
            if sent_bytes + size > max_bytes:
                end = "bytes"
                break
            sent_rows, sent_bytes = sent_rows + 1, sent_bytes + size
            chunk.append(kept)
            chunk_bytes += size
            if chunk_bytes >= CHUNK_BYTES or len(chunk) >= CHUNK_ROWS:
                yield ("rows", chunk)
                chunk, chunk_bytes = [], 0
        # Few rows per fetch while rows are large: one fetch never holds much more than the
        # byte cap's remainder (the child's memory is capped too, but this keeps it small).
        mean = max(1, sent_bytes // max(1, sent_rows))
        batch = max(1, min(500, max_rows + 1 - sent_rows, (max_bytes - sent_bytes) // mean + 1))
    if chunk:
        yield ("rows", chunk)
    yield ("end", end)


def _serve(engine: _Engine, row_bytes: Callable[[Sequence[Any]], int], out: int) -> None:
    while True:
        try:
            request = read_message(0)
        except EOFError:
            return  # the parent closed the pipe: the run is over
        try:
            if request[0] == "explain":
                plan = engine.explain(request[1])
                size = len(plan) if isinstance(plan, str) else sum(len(p) for p in plan)
                if size > MAX_PLAN_BYTES:
                    raise _FailureError(f"EXPLAIN output larger than {MAX_PLAN_BYTES:,} bytes")
                write_message(out, ("plan", plan))
            elif request[0] == "execute":
                _, sql, params, max_rows, max_bytes = request
                columns, fetch = engine.execute(sql, params)
                write_message(out, ("columns", [str(c) for c in columns]))
                for message in _row_messages(fetch, row_bytes, max_rows, max_bytes):
                    write_message(out, message)
            else:
                raise _FailureError(f"unknown request {request[0]!r}")
        except _FailureError as failure:
            write_message(out, ("error", failure.message, failure.sqlstate, failure.kind))
        except MemoryError:
            # RLIMIT_AS reached in Python code (a huge value): say so before anything else.
            write_message(out, ("error", "out of memory: the worker's memory limit", None,
                                RESOURCE_LIMIT))  # fmt: skip
        except OSError:
            raise  # the pipe to the parent is gone: nobody to answer
        except Exception as exc:  # a bug, or a value plain() cannot walk (RecursionError)
            write_message(out, ("error", _describe(exc), None, None))
        finally:
            engine.finish()


def _describe(exc: BaseException) -> str:
    """The exception's type and message for the parent; never a traceback."""
    return f"the worker failed: {type(exc).__name__}: {exc}"[:MAX_MESSAGE_CHARS]


def main() -> int:
    # Replies go to a private copy of stdout; fd 1 points at /dev/null, so that nothing a
    # library prints can corrupt the message stream.
    out = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    try:
        config = read_message(0)
    except EOFError:
        return 0
    try:
        engine, row_bytes = _setup(config)
    except _FailureError as failure:  # the engine's own error: a missing file, not a database
        write_message(out, ("error", failure.message, failure.sqlstate, failure.kind))
        return 0
    except Exception as exc:  # an import that failed, a limit that could not be set
        write_message(out, ("error", _describe(exc), None, None))
        return 1
    write_message(out, ("ready",))
    _serve(engine, row_bytes, out)
    return 0


def _setup(config: dict[str, Any]) -> tuple[_Engine, Callable[[Sequence[Any]], int]]:
    backend, path, deadline_at = config["backend"], config["path"], config["deadline_at"]
    box = SandboxLimits(**config["sandbox"])
    _bootstrap_package()
    # Everything the child imports, before the limits: imports open files, map large libraries
    # and (without -B) would write bytecode, which RLIMIT_FSIZE answers with SIGXFSZ.
    from schemawise.db.guard import row_bytes

    if backend == "duckdb":
        import decimal  # noqa: F401
        import threading  # noqa: F401
        import uuid  # noqa: F401

        import duckdb  # noqa: F401
    else:
        import sqlite3  # noqa: F401

        import schemawise.db.sqlite_policy  # noqa: F401
    _apply_rlimits(box, deadline_at, int(config["cpu_seconds"]))
    engine = _DuckDB(path, deadline_at, box) if backend == "duckdb" else _SQLite(path, deadline_at)
    return engine, row_bytes


if __name__ == "__main__":
    try:
        status = main()
    except MemoryError:
        status = EXIT_OUT_OF_MEMORY  # no reply was possible: the exit status says why
    except BaseException:
        status = 1  # never a traceback; the parent sees the pipe close
    # No interpreter teardown: the database is read-only, there is nothing to flush.
    os._exit(status)
