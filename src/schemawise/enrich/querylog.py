"""Where a query log comes from: a JSONL file, or the `pg_stat_statements` view of the
Postgres database being indexed (statements normalised with `$1` placeholders, each counted
by how often it ran)."""

from __future__ import annotations

from pathlib import Path

from schemawise.db.base import QueryFailedError, Source
from schemawise.errors import SchemawiseError
from schemawise.graph.infer import QueryLogEntry, read_query_log

# The value of `--query-log` that means "read the source database's statistics".
PG_STAT_STATEMENTS = "pg_stat_statements"
# The most-run statements read, at most: the tail adds little and parsing costs time.
MAX_STATEMENTS = 5000

STATEMENTS_SQL = """
SELECT s.query, s.calls FROM pg_stat_statements s
JOIN pg_database d ON d.oid = s.dbid
WHERE d.datname = current_database()
  AND lower(ltrim(s.query)) ~ '^(select|with)[[:space:](]'
ORDER BY s.calls DESC, s.query
LIMIT %s
"""


def is_statement_statistics(spec: str | Path | None) -> bool:
    return spec is not None and str(spec) == PG_STAT_STATEMENTS


def read_log(spec: str | Path, source: Source | None = None) -> list[QueryLogEntry]:
    """The entries of a JSONL log file, or of `pg_stat_statements` when `spec` says so."""
    if not is_statement_statistics(spec):
        return read_query_log(Path(spec))
    if source is None or source.dialect != "postgres":
        raise SchemawiseError(
            "pg_stat_statements is a Postgres view; this source is not Postgres.",
            "Give a JSONL query log instead: one {sql, user, timestamp} object per line.",
        )
    return read_pg_stat_statements(source)


def read_pg_stat_statements(source: Source) -> list[QueryLogEntry]:
    try:
        rows = source.query(STATEMENTS_SQL, (MAX_STATEMENTS,), timeout_ms=15_000)
    except QueryFailedError as exc:
        raise SchemawiseError(
            f"Could not read pg_stat_statements ({exc.kind or 'error'}): {exc}",
            "Load the extension (shared_preload_libraries = 'pg_stat_statements', then "
            "CREATE EXTENSION pg_stat_statements) and grant pg_read_all_stats to the role, "
            "or give a JSONL query log.",
        ) from exc
    return [QueryLogEntry(sql=str(query), calls=max(1, int(calls))) for query, calls in rows]
