"""A throw-away database in the embedded server for a benchmark's index and synthetic schemas,
so that a benchmark leaves the user's own index exactly as it found it — also after a crash:
a scratch database left behind is dropped when the same benchmark next starts."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg import sql as pgsql

from schemawise.db.embedded import database_url, ensure_started

PREFIX = "schemawise_bench_"


@contextmanager
def scratch_database(name: str) -> Iterator[str]:
    """Yield the URL of a new, empty database `schemawise_bench_<name>` (with pgvector),
    dropped afterwards."""
    database = PREFIX + name
    admin = database_url(ensure_started(), "postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(
            pgsql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(pgsql.Identifier(database))
        )
        conn.execute(pgsql.SQL("CREATE DATABASE {}").format(pgsql.Identifier(database)))
    url = database_url(admin, database)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        yield url
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(
                pgsql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                    pgsql.Identifier(database)
                )
            )
