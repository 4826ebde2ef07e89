"""What `rows enable` recorded about a searchable table (schemawise.rows_config)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql as pgsql

from schemawise.errors import SchemawiseError

BOOKKEEPING = """
CREATE SCHEMA IF NOT EXISTS schemawise;
CREATE TABLE IF NOT EXISTS schemawise.rows_config (
    table_name    text PRIMARY KEY,
    key_column    text NOT NULL,
    key_type      text NOT NULL,
    text_columns  text[] NOT NULL,
    tenant_column text,
    model         text NOT NULL,
    dim           integer NOT NULL,
    threshold     double precision,
    calibrated_at timestamptz,
    calibration   jsonb,
    enabled_at    timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS schemawise.rows_outbox (
    id              bigserial PRIMARY KEY,
    table_name      text NOT NULL,
    row_key         text NOT NULL,
    enqueued_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    last_error      text,
    parked_at       timestamptz
);
ALTER TABLE schemawise.rows_config ADD COLUMN IF NOT EXISTS gate_threshold double precision;
CREATE INDEX IF NOT EXISTS rows_outbox_ready ON schemawise.rows_outbox (next_attempt_at, id)
    WHERE parked_at IS NULL;
CREATE INDEX IF NOT EXISTS rows_outbox_row ON schemawise.rows_outbox (table_name, row_key);
"""
CHANNEL = "schemawise_rows"


@dataclass(frozen=True)
class RowsConfig:
    table: str  # schema.table
    key_column: str
    key_type: str
    text_columns: list[str]
    tenant_column: str | None
    model: str
    dim: int
    threshold: float | None
    calibrated: bool
    # "Is anything relevant at all?": when even the nearest row is farther than this and no
    # row matches the terms, the answer is empty. Rows are then cut at `threshold`.
    gate: float | None = None

    @property
    def schema_name(self) -> str:
        return self.table.split(".", 1)[0]

    @property
    def table_name(self) -> str:
        return self.table.split(".", 1)[1]

    def ref(self) -> pgsql.Composable:
        return pgsql.Identifier(self.schema_name, self.table_name)

    def key(self) -> pgsql.Composable:
        return pgsql.Identifier(self.key_column)

    def text_expression(self, alias: str | None = None) -> pgsql.Composable:
        """The embedded text: the text columns joined by newlines (hashed with md5)."""
        parts = [
            pgsql.SQL("coalesce({}::text, '')").format(
                pgsql.Identifier(alias, c) if alias else pgsql.Identifier(c)
            )
            for c in self.text_columns
        ]
        return pgsql.SQL("concat_ws(E'\\n', {})").format(pgsql.SQL(", ").join(parts))


def qualified(name: str) -> str:
    """`assignments` → `public.assignments`; `recruiting.assignments` unchanged."""
    return name if "." in name else f"public.{name}"


def load_config(conn: psycopg.Connection[Any], table: str) -> RowsConfig:
    row = (
        conn.execute(
            "SELECT table_name, key_column, key_type, text_columns, tenant_column, model, dim, "
            "threshold, calibrated_at IS NOT NULL, gate_threshold FROM schemawise.rows_config "
            "WHERE table_name = %s",
            (qualified(table),),
        ).fetchone()
        if _has_bookkeeping(conn)
        else None
    )
    if row is None:
        raise SchemawiseError(
            f"{table} is not enabled for row search.",
            f'Run `schemawise rows enable URL {table} --text "col1,col2"` first.',
        )
    return RowsConfig(
        row[0], row[1], row[2], list(row[3]), row[4], row[5], row[6], row[7], row[8], row[9]
    )


def all_configs(conn: psycopg.Connection[Any]) -> list[RowsConfig]:
    if not _has_bookkeeping(conn):
        return []
    names = conn.execute("SELECT table_name FROM schemawise.rows_config ORDER BY 1").fetchall()
    return [load_config(conn, name) for (name,) in names]


def _has_bookkeeping(conn: psycopg.Connection[Any]) -> bool:
    row = conn.execute("SELECT to_regclass('schemawise.rows_config') IS NOT NULL").fetchone()
    return bool(row and row[0])
