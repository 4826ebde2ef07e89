"""A throw-away database in the embedded server for a benchmark's index and synthetic schemas,
so that a benchmark leaves the user's own index exactly as it found it — also after a crash:
a scratch database whose process is gone is dropped when the same benchmark next starts. Each
run has its own (named with its process id), so two runs of one benchmark at once do not
drop each other's database mid-run."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg import sql as pgsql

from schemawise.db.embedded import database_url, ensure_started

PREFIX = "schemawise_bench_"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def _drop(conn: psycopg.Connection[tuple[object, ...]], database: str) -> None:
    conn.execute(
        pgsql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(pgsql.Identifier(database))
    )


@contextmanager
def scratch_database(name: str) -> Iterator[str]:
    """Yield the URL of a new, empty database `schemawise_bench_<name>_<pid>` (with
    pgvector), dropped afterwards."""
    stem = PREFIX + name + "_"
    database = f"{stem}{os.getpid()}"
    admin = database_url(ensure_started(), "postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT datname FROM pg_database WHERE starts_with(datname, %s)", (stem,)
        ).fetchall()
        for (left,) in rows:  # left behind by a run that crashed
            suffix = str(left)[len(stem) :]
            if str(left) == database or (suffix.isdigit() and not _alive(int(suffix))):
                _drop(conn, str(left))
        conn.execute(pgsql.SQL("CREATE DATABASE {}").format(pgsql.Identifier(database)))
    url = database_url(admin, database)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        yield url
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            _drop(conn, database)
