"""Connections to the databases schemawise reads: Postgres, SQLite, DuckDB, and the embedded one."""

from __future__ import annotations

from schemawise.db.base import Catalog, ForeignKey, QueryFailedError, Source
from schemawise.db.urls import parse_url


def connect(url: str, *, schemas: list[str] | None = None) -> Source:
    """Open a read connection to the database a URL names."""
    parsed = parse_url(url)
    if parsed.kind == "sqlite":
        from schemawise.db.sqlite import SQLiteSource

        return SQLiteSource(parsed.target)
    if parsed.kind == "duckdb":
        from schemawise.db.duckdb import DuckDBSource

        return DuckDBSource(parsed.target)
    from schemawise.db.postgres import PostgresSource

    if parsed.kind == "embedded":
        from schemawise.db.embedded import admin_url

        return PostgresSource(admin_url(parsed.target), schemas=schemas)
    return PostgresSource(parsed.target, schemas=schemas)


__all__ = ["Catalog", "ForeignKey", "QueryFailedError", "Source", "connect"]
