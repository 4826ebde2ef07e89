"""SQLite and DuckDB runs in a killable child process (SECURITY.md L6–L7).

An in-process engine cannot be bounded from inside: DuckDB folds constants while planning and
SQLite checks its progress handler only between opcodes, so one function call can run for
minutes. Each run gets one child (`db/sandbox_worker.py`) with lowered resource limits; the
parent waits on the pipe only until the deadline and then kills the child.

Start method: `subprocess` running the worker file with `python -I -B` and an empty environment.
Measured on this machine (p50, a child answering once): subprocess 23 ms with sqlite3, 165 ms
with duckdb (its import); multiprocessing "spawn" and "forkserver" re-run the parent's
`__main__` in every child (404 ms per child under a CLI-like main). A fork of the parent would
copy its threads and Postgres connections. `subprocess` forks and execs in C, closes every
inherited descriptor and imports nothing of the parent.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import select
import signal
import subprocess
import sys
import time
import weakref
from collections.abc import Callable
from typing import Any, NoReturn, Self

from schemawise.db.sandbox_worker import (
    EXIT_OUT_OF_MEMORY,
    HEADER,
    MAX_MESSAGE_CHARS,
    SandboxLimits,
    pack,
)

__all__ = [
    "SandboxLimits",
    "SandboxSession",
    "explain_duckdb",
    "explain_sqlite",
    "run_duckdb",
    "run_sqlite",
]

BACKENDS = ("sqlite", "duckdb")
# os.path, not pathlib: the child imports this module too (through guard.py), at every run.
WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sandbox_worker.py")
MAX_REPLY_BYTES = 4 << 20  # anything but rows: a plan, column names, an error message
# Signals that mean the child reached one of its own limits (CPU time, file size).
LIMIT_SIGNALS = {signal.SIGXCPU, signal.SIGXFSZ}

# Classes a reply may contain besides plain builtins (see sandbox_worker.plain).
_ALLOWED_CLASSES = {
    ("datetime", "date"),
    ("datetime", "time"),
    ("datetime", "datetime"),
    ("datetime", "timedelta"),
    ("datetime", "timezone"),
    ("decimal", "Decimal"),
    ("uuid", "UUID"),
}


class _SafeUnpickler(pickle.Unpickler):
    """The child runs hostile SQL: its replies are data, never code (no other globals)."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED_CLASSES:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a reply")


class _ExpiredError(Exception):
    """The deadline passed while waiting on the child."""


class _GoneError(Exception):
    """The child closed its end of a pipe: it died, or is dying."""


class _BrokenError(Exception):
    """The child sent something it never sends: treat it as lost."""


class _Channel:
    """Messages over the child's stdin and stdout, never waiting past the deadline."""

    def __init__(self, to_child: int, from_child: int) -> None:
        self.to_child, self.from_child = to_child, from_child
        os.set_blocking(to_child, False)
        os.set_blocking(from_child, False)

    def _wait(self, fd: int, event: int, deadline: Deadline) -> None:
        poller = select.poll()  # not select(): descriptors above 1024 exist in servers
        poller.register(fd, event)
        while True:
            left = deadline.remaining()
            if left <= 0:
                raise _ExpiredError
            if poller.poll(max(1, int(left * 1000 + 1))):
                return

    def send(self, message: Any, deadline: Deadline) -> None:
        data = memoryview(pack(message))
        while data:
            self._wait(self.to_child, select.POLLOUT, deadline)
            try:
                data = data[os.write(self.to_child, data) :]
            except BlockingIOError:
                continue
            except (BrokenPipeError, ConnectionError) as exc:
                raise _GoneError from exc

    def _read(self, size: int, deadline: Deadline) -> bytes:
        buffer = bytearray(size)
        view = memoryview(buffer)
        done = 0
        while done < size:
            self._wait(self.from_child, select.POLLIN, deadline)
            try:
                got = os.readv(self.from_child, [view[done:]])
            except BlockingIOError:
                continue
            if got == 0:
                raise _GoneError
            done += got
        return bytes(buffer)

    def recv(self, limit: int, deadline: Deadline) -> Any:
        """One message of at most `limit` bytes: a longer one is refused before it is read."""
        (size,) = HEADER.unpack(self._read(HEADER.size, deadline))
        if size > limit:
            raise _BrokenError(f"a reply of {size:,} bytes (at most {limit:,} expected)")
        try:
            return _SafeUnpickler(io.BytesIO(self._read(size, deadline))).load()
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError) as exc:
            raise _BrokenError(f"an unreadable reply ({exc})") from None


def _reap(proc: subprocess.Popen[bytes], grace: float) -> tuple[int, float]:
    """Stop the child if it still runs (SIGTERM, then SIGKILL after `grace`), wait for it and
    return its exit status and CPU seconds. Always leaves no zombie."""
    if proc.returncode is not None:
        return proc.returncode, 0.0  # reaped before
    ended = _wait(proc, 0.0)
    try:
        if ended is None:
            _signal(proc, signal.SIGTERM)
            ended = _wait(proc, grace)
    finally:
        if ended is None:  # still running, or interrupted above (even by KeyboardInterrupt)
            _signal(proc, signal.SIGKILL)
            ended = _wait(proc, None)
    assert ended is not None  # a blocking wait always returns a status
    return ended


def _signal(proc: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signum)  # still our unreaped child: the pid cannot be reused yet


def _wait(proc: subprocess.Popen[bytes], timeout: float | None) -> tuple[int, float] | None:
    """wait4 rather than Popen.wait: the child's CPU time tells an RLIMIT_CPU kill apart."""
    end = None if timeout is None else time.monotonic() + timeout
    while True:
        try:
            pid, status, usage = os.wait4(proc.pid, 0 if end is None else os.WNOHANG)
        except ChildProcessError:  # reaped by someone else (a SIGCHLD handler): status unknown
            proc.returncode = 255
            return proc.returncode, 0.0
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, usage.ru_utime + usage.ru_stime
        if end is None or time.monotonic() >= end:
            return None
        time.sleep(0.005)


def _kill_quietly(proc: subprocess.Popen[bytes]) -> None:
    """The finalizer of a session nobody closed."""
    if proc.returncode is None:
        _signal(proc, signal.SIGKILL)
        _wait(proc, None)
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            pipe.close()


class SandboxSession:
    """One guarded SQLite or DuckDB run in one child process (a `GuardedSession`)."""

    def __init__(
        self,
        backend: str,
        path: str,
        limits: Limits,
        deadline: Deadline,
        sandbox: SandboxLimits | None = None,
    ) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"SandboxSession runs {' or '.join(BACKENDS)}, not {backend!r}")
        self.backend = backend
        self.path = os.path.abspath(path)
        self.limits = limits
        self.deadline = deadline
        self.sandbox = sandbox or SandboxLimits()
        self._proc: subprocess.Popen[bytes] | None = None
        self._channel: _Channel | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._lost: GuardedQueryError | None = None  # once the child is gone, every call fails
        self._cpu_seconds = 0

    @property
    def pid(self) -> int | None:
        """The child's process id while it runs (tests kill it from outside)."""
        return self._proc.pid if self._proc is not None and self._proc.returncode is None else None

    def __enter__(self) -> Self:
        self._start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> None:
        if self._proc is not None or self._lost is not None:
            return
        if self.deadline.expired():
            self._lost = self._timeout_error()
            raise self._lost
        # RLIMIT_CPU: the wall-clock time left, rounded up, and a grace; with one engine thread
        # the CPU time never passes the wall time, so this ends only a child left running.
        self._cpu_seconds = int(self.deadline.remaining()) + 1 + self.sandbox.cpu_grace_seconds
        self._proc = subprocess.Popen(
            # -I: no environment variables, user site or script folder on sys.path; -B: no
            # bytecode written (the child writes no files at all).
            [sys.executable, "-I", "-B", WORKER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={},  # nothing of the parent's environment (API keys, passwords) in the child
            cwd="/",
            start_new_session=True,  # a terminal's Ctrl-C reaches the parent, which kills it
        )
        self._finalizer = weakref.finalize(self, _kill_quietly, self._proc)
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._channel = _Channel(self._proc.stdin.fileno(), self._proc.stdout.fileno())
        config = {
            "backend": self.backend,
            "path": self.path,
            "deadline_at": self.deadline.at,  # time.monotonic is system-wide on Linux
            "cpu_seconds": self._cpu_seconds,
            "sandbox": self.sandbox.to_wire(),
        }
        try:
            self._talk(lambda ch: ch.send(config, self.deadline))
            reply = self._talk(lambda ch: ch.recv(MAX_REPLY_BYTES, self.deadline))
            if reply != ("ready",):
                self._fail_on(reply)
        except BaseException:
            self.close()
            raise

    def _talk(self, step: Callable[[_Channel], Any]) -> Any:
        """Run one channel step; the deadline, the child's death or a malformed reply end the
        session with a GuardedQueryError and the child stopped and reaped."""
        if self._lost is not None:
            raise self._lost
        assert self._channel is not None and self._proc is not None
        try:
            return step(self._channel)
        except _ExpiredError:
            self._stop()
            self._lost = self._timeout_error()
        except _GoneError:
            status, cpu = self._stop()
            self._lost = self._death_error(status, cpu)
        except _BrokenError as exc:
            self._broken(str(exc))
        raise self._lost

    def _broken(self, why: str) -> NoReturn:
        """The child sent what it never sends: it is treated as lost, and stopped."""
        self._stop()
        self._lost = GuardedQueryError(
            self.backend, f"the {self.backend} worker failed: {why}", kind=CONNECTION_LOST
        )
        raise self._lost

    def _stop(self) -> tuple[int, float]:
        assert self._proc is not None
        return _reap(self._proc, self.sandbox.kill_grace_seconds)

    def _timeout_error(self) -> GuardedQueryError:
        return GuardedQueryError(
            self.backend,
            f"deadline reached: the {self.backend} worker was stopped at the wall-clock limit",
            "57014",
            kind=TIMEOUT,
        )

    def _death_error(self, status: int, cpu: float) -> GuardedQueryError:
        if self.deadline.expired():
            return self._timeout_error()  # its own alarm, or our kill racing its exit
        hit_limit = (
            status == EXIT_OUT_OF_MEMORY
            or -status in LIMIT_SIGNALS
            or (status == -signal.SIGKILL and cpu >= self._cpu_seconds - 0.1)  # hard RLIMIT_CPU
        )
        how = f"exit status {status}" if status >= 0 else f"signal {-status}"
        if hit_limit:
            return GuardedQueryError(
                self.backend,
                f"the {self.backend} worker exceeded its resource limits ({how})",
                kind=RESOURCE_LIMIT,
            )
        return GuardedQueryError(
            self.backend, f"the {self.backend} worker ended unexpectedly ({how})",
            kind=CONNECTION_LOST,
        )  # fmt: skip

    def _fail_on(self, reply: Any) -> NoReturn:
        """An `error` reply becomes the engine's error; anything else breaks the session."""
        if (
            isinstance(reply, tuple)
            and len(reply) == 4
            and reply[0] == "error"
            and isinstance(reply[1], str)
            and all(v is None or isinstance(v, str) for v in reply[2:])
        ):
            _, message, sqlstate, kind = reply
            if kind == TIMEOUT:  # the child's own timer fired first: the same deadline
                raise self._timeout_error()
            kind = RESOURCE_LIMIT if kind == RESOURCE_LIMIT else None
            raise GuardedQueryError(self.backend, message[:MAX_MESSAGE_CHARS], sqlstate, kind=kind)
        self._broken(f"unexpected reply {reply!r:.80}")

    def _request(self, message: tuple[Any, ...], limit: int = MAX_REPLY_BYTES) -> Any:
        self._start()
        self._talk(lambda ch: ch.send(message, self.deadline))
        return self._recv(limit)

    def _recv(self, limit: int) -> Any:
        return self._talk(lambda ch: ch.recv(limit, self.deadline))

    def explain(self, sql: str) -> Any:
        """SQLite: the EXPLAIN QUERY PLAN details; DuckDB: the EXPLAIN text."""
        reply = self._request(("explain", sql))
        if isinstance(reply, tuple) and len(reply) == 2 and reply[0] == "plan":
            plan = reply[1]
            if self.backend == "sqlite" and isinstance(plan, list):
                if all(isinstance(p, str) for p in plan):
                    return plan
            elif self.backend == "duckdb" and isinstance(plan, str):
                return plan
        self._fail_on(reply)

    def execute(self, sql: str, params: dict[str, Any] | None = None) -> QueryResult:
        started = time.monotonic()
        limits = self.limits
        reply = self._request(("execute", sql, params, limits.max_rows, limits.max_bytes))
        if not (isinstance(reply, tuple) and len(reply) == 2 and reply[0] == "columns"):
            self._fail_on(reply)
        columns = reply[1]
        if not (isinstance(columns, list) and all(isinstance(c, str) for c in columns)):
            self._fail_on(reply)
        collector = RowCollector(limits)
        while True:
            # A chunk's rows fit the byte cap's remainder as the child counts them; pickled,
            # text may take up to 4 bytes a character.
            budget = max(0, limits.max_bytes - collector.size)
            reply = self._recv(4 * budget + 64 * 1024)  # also fits an error (MAX_MESSAGE_CHARS)
            if isinstance(reply, tuple) and len(reply) == 2 and reply[0] == "rows":
                if not isinstance(reply[1], list) or not self._collect(collector, reply[1]):
                    break  # more than the child should have sent: the parent's cap holds
            elif isinstance(reply, tuple) and len(reply) == 2 and reply[0] == "end":
                self._end(collector, reply[1])
                break
            else:
                self._fail_on(reply)
        return QueryResult(
            columns,
            collector.rows,
            collector.truncated,
            collector.reason,
            (time.monotonic() - started) * 1000,
        )

    def _collect(self, collector: RowCollector, rows: list[Any]) -> bool:
        for row in rows:
            if not isinstance(row, list | tuple):
                self._broken("a row that is not a sequence")
            if not collector.add(row):
                # A row past a cap, which the child should have kept: the parent's cap holds.
                self.close()
                return False
        return True

    def _end(self, collector: RowCollector, why: Any) -> None:
        if why == "rows" and len(collector.rows) == self.limits.max_rows:
            collector.add(())  # at the row cap, the collector marks truncation itself
        elif why == "bytes":
            # The next row would pass the byte cap: the child measured it and did not send it.
            collector.truncated = True
            collector.reason = over_bytes(self.limits, len(collector.rows))
        elif why is not None:
            self._broken(f"rows ended with {why!r:.40} after {len(collector.rows)} rows")

    def close(self) -> None:
        """Stop and reap the child (always: also after errors and KeyboardInterrupt)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            _reap(proc, self.sandbox.kill_grace_seconds)
        finally:
            if self._finalizer is not None:
                self._finalizer.detach()
            _kill_quietly(proc)  # closes the pipes; the child is already reaped
            if self._lost is None:
                self._lost = GuardedQueryError(
                    self.backend, "the session is closed", kind=CONNECTION_LOST
                )


def _session(backend: str, path: str, limits: Limits) -> SandboxSession:
    return SandboxSession(backend, path, limits, Deadline.after(limits.timeout_seconds))


def run_sqlite(path: str, sql: str, limits: Limits) -> QueryResult:
    with _session("sqlite", path, limits) as session:
        return session.execute(sql)


def run_duckdb(path: str, sql: str, limits: Limits) -> QueryResult:
    with _session("duckdb", path, limits) as session:
        return session.execute(sql)


def explain_sqlite(path: str, sql: str, timeout_seconds: float) -> list[str]:
    with _session("sqlite", path, Limits(timeout_seconds=timeout_seconds)) as session:
        plan: list[str] = session.explain(sql)
        return plan


def explain_duckdb(path: str, sql: str, timeout_seconds: float = 10.0) -> str:
    with _session("duckdb", path, Limits(timeout_seconds=timeout_seconds)) as session:
        plan: str = session.explain(sql)
        return plan


# At the end, not the top: db/guard.py re-exports run_sqlite and the others from this module
# at its own end, so whichever of the two is imported first, the other finds every name it
# needs already defined (the names below are only used inside functions).
from schemawise.db.guard import (  # noqa: E402
    CONNECTION_LOST,
    RESOURCE_LIMIT,
    TIMEOUT,
    Deadline,
    GuardedQueryError,
    Limits,
    QueryResult,
    RowCollector,
    over_bytes,
)
