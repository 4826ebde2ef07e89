"""`rows status`: per searchable table, how much is embedded, queued, stale and parked."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql as pgsql

from schemawise.rows.config import all_configs


def status(conn: psycopg.Connection[Any]) -> list[dict[str, Any]]:
    out = []
    for config in all_configs(conn):
        counts = conn.execute(
            pgsql.SQL(
                "SELECT count(*), count(sw_embedding), "
                "count(*) FILTER (WHERE sw_embedding IS NOT NULL "
                "AND sw_text_hash IS DISTINCT FROM md5({text})) FROM {table}"
            ).format(text=config.text_expression(), table=config.ref())
        ).fetchone()
        queue = conn.execute(
            "SELECT count(*) FILTER (WHERE parked_at IS NULL), count(*) FILTER (WHERE parked_at IS "
            "NOT NULL), max(attempts) FROM schemawise.rows_outbox WHERE table_name = %s",
            (config.table,),
        ).fetchone()
        parked = conn.execute(
            "SELECT row_key, attempts, last_error FROM schemawise.rows_outbox "
            "WHERE table_name = %s AND parked_at IS NOT NULL ORDER BY id LIMIT 20",
            (config.table,),
        ).fetchall()
        assert counts is not None and queue is not None
        out.append(
            {
                "table": config.table,
                "text_columns": config.text_columns,
                "tenant_column": config.tenant_column,
                "model": config.model,
                "dim": config.dim,
                "rows": counts[0],
                "embedded": counts[1],
                "stale": counts[2],
                "missing": counts[0] - counts[1],
                "queued": queue[0],
                "parked": queue[1],
                "parked_examples": [
                    {"key": k, "attempts": a, "last_error": e} for k, a, e in parked
                ],
                "threshold": config.threshold,
                "calibrated": config.calibrated,
            }
        )
    return out
