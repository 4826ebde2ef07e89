"""`rows enable` / `rows disable`: one idempotent migration that makes a table searchable."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql as pgsql

from schemawise.db.urls import parse_url
from schemawise.errors import SchemawiseError
from schemawise.index.embed import get_embedder, model_spec
from schemawise.rows.config import BOOKKEEPING, CHANNEL, load_config, qualified

WEIGHTS = ["A", "B", "C", "D"]
# pgvector's HNSW indexes `vector` up to 2,000 dimensions; `halfvec` up to 4,000.
MAX_VECTOR_DIM = 2000


@dataclass(frozen=True)
class PgvectorSupport:
    version: str
    iterative_scan: bool  # 0.8+: filtered HNSW scans keep going until k rows are found


def pgvector_support(conn: psycopg.Connection[Any]) -> PgvectorSupport:
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    if row is None:
        available = conn.execute(
            "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
        ).fetchone()
        if available is None:
            raise SchemawiseError(
                "pgvector is not installed on this server.",
                "Install pgvector ≥ 0.5 (0.8 recommended), or use the embedded database.",
            )
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.errors.InsufficientPrivilege as exc:
            raise SchemawiseError(
                f"pgvector {available[0]} is available but not created in this database.",
                "Ask an administrator to run CREATE EXTENSION vector;",
            ) from exc
        return pgvector_support(conn)
    version = row[0]
    parts = tuple(int(p) for p in re.findall(r"\d+", version)[:2])
    if parts < (0, 5):
        raise SchemawiseError(
            f"pgvector {version} has no HNSW index.",
            "Upgrade pgvector to 0.5 or later (0.8 for iterative scans).",
        )
    return PgvectorSupport(version, parts >= (0, 8))


def _object_name(table: str, suffix: str) -> str:
    base = re.sub(r"\W", "_", table.replace(".", "_"))
    return f"{base}_{suffix}"[:63]


def _table_columns(conn: psycopg.Connection[Any], table: str) -> dict[str, str]:
    schema, name = table.split(".", 1)
    rows = conn.execute(
        "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
        "JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relname = %s AND a.attnum > 0 AND NOT a.attisdropped",
        (schema, name),
    ).fetchall()
    return dict(rows)


def _primary_key(conn: psycopg.Connection[Any], table: str) -> list[str]:
    rows = conn.execute(
        "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
        "AND a.attnum = ANY(i.indkey) WHERE i.indrelid = %s::regclass AND i.indisprimary",
        (table,),
    ).fetchall()
    return [r[0] for r in rows]


@dataclass
class EnableReport:
    table: str
    text_columns: list[str]
    tenant_column: str | None
    model: str
    dim: int
    pgvector: str
    iterative_scan: bool
    enqueued: int
    changed_model: bool

    def to_dict(self) -> dict[str, Any]:
        return self.__dict__.copy()


def enable(
    url: str,
    table: str,
    text_columns: list[str],
    tenant_column: str | None = None,
    model: str | None = None,
    *,
    row_security: bool = False,
) -> EnableReport:
    parsed = parse_url(url)
    if parsed.kind not in ("postgres", "embedded"):
        raise SchemawiseError(
            "Row search needs PostgreSQL with pgvector.",
            "Use a postgresql:// URL or `embedded`; SQLite and DuckDB files are not supported.",
        )
    target = parsed.target
    if parsed.kind == "embedded":
        from schemawise.db.embedded import admin_url

        target = admin_url(parsed.target)
    table = qualified(table)
    embedder = get_embedder(model)
    if not text_columns:
        raise SchemawiseError("Name at least one text column.", 'e.g. --text "title,description"')
    if row_security:
        from schemawise.db.roles import ensure_reader_role

        ensure_reader_role(target)  # the policy names the role: it must exist first
    with psycopg.connect(target) as conn:
        support = pgvector_support(conn)
        conn.commit()
        columns = _table_columns(conn, table)
        if not columns:
            raise SchemawiseError(
                f"No table {table}.", "Give schema.table, e.g. recruiting.assignments."
            )
        missing = [
            c
            for c in [*text_columns, *([tenant_column] if tenant_column else [])]
            if c not in columns
        ]
        if missing:
            raise SchemawiseError(
                f"{table} has no column {', '.join(missing)}.",
                f"Its columns: {', '.join(c for c in columns if not c.startswith('sw_'))}.",
            )
        key = _primary_key(conn, table)
        if len(key) != 1:
            raise SchemawiseError(
                f"{table} needs a single-column primary key to track rows.",
                "Add one (e.g. an identity column) and enable again.",
            )
        if row_security and not tenant_column:
            raise SchemawiseError("--row-security needs --tenant.", "Name the tenant column.")
        report = _migrate(
            conn,
            table,
            key[0],
            columns[key[0]],
            text_columns,
            tenant_column,
            model_spec(model),
            embedder.dim,
        )
        if row_security and tenant_column:
            enable_row_security(conn, table, tenant_column)
        conn.commit()
    report.pgvector, report.iterative_scan = support.version, support.iterative_scan
    return report


def _migrate(
    conn: psycopg.Connection[Any],
    table: str,
    key: str,
    key_type: str,
    text_columns: list[str],
    tenant_column: str | None,
    model: str,
    dim: int,
) -> EnableReport:
    """One transaction: columns, indexes, trigger, bookkeeping. Safe to run again."""
    conn.execute(BOOKKEEPING)
    schema, name = table.split(".", 1)
    ref = pgsql.Identifier(schema, name)
    previous = conn.execute(
        "SELECT text_columns, model, dim, tenant_column FROM schemawise.rows_config "
        "WHERE table_name = %s",
        (table,),
    ).fetchone()
    vector_type = pgsql.SQL("vector({})" if dim <= MAX_VECTOR_DIM else "halfvec({})").format(dim)
    ops = pgsql.SQL("vector_cosine_ops" if dim <= MAX_VECTOR_DIM else "halfvec_cosine_ops")
    changed_model = previous is not None and (previous[1] != model or previous[2] != dim)
    changed_text = previous is not None and list(previous[0]) != text_columns
    if changed_model or changed_text:
        # A new model or new text: the old vectors mean nothing; re-embed through the outbox.
        conn.execute(pgsql.SQL("ALTER TABLE {} DROP COLUMN IF EXISTS sw_embedding").format(ref))
        conn.execute(pgsql.SQL("UPDATE {} SET sw_text_hash = NULL").format(ref))
    if changed_text or _tsv_lacks_simple(conn, table):
        conn.execute(pgsql.SQL("ALTER TABLE {} DROP COLUMN IF EXISTS sw_tsv").format(ref))
    conn.execute(
        pgsql.SQL("ALTER TABLE {} ADD COLUMN IF NOT EXISTS sw_embedding {}").format(
            ref, vector_type
        )
    )
    conn.execute(pgsql.SQL("ALTER TABLE {} ADD COLUMN IF NOT EXISTS sw_text_hash text").format(ref))
    # Stemmed words weighted by column, and every word as written (the `simple` configuration,
    # lowest weight): English drops stop words, so "you" would otherwise find no row at all.
    weighted = pgsql.SQL(" || ").join(
        [
            pgsql.SQL("setweight(to_tsvector('english', coalesce({}::text, '')), {})").format(
                pgsql.Identifier(c), pgsql.Literal(WEIGHTS[min(i, 3)])
            )
            for i, c in enumerate(text_columns)
        ]
        + [
            pgsql.SQL("setweight(to_tsvector('simple', coalesce({}::text, '')), 'D')").format(
                pgsql.Identifier(c)
            )
            for c in text_columns
        ]
    )
    conn.execute(
        pgsql.SQL(
            "ALTER TABLE {} ADD COLUMN IF NOT EXISTS sw_tsv tsvector "
            "GENERATED ALWAYS AS ({}) STORED"
        ).format(ref, weighted)
    )
    conn.execute(
        pgsql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} USING hnsw (sw_embedding {})").format(
            pgsql.Identifier(_object_name(table, "sw_hnsw")), ref, ops
        )
    )
    conn.execute(
        pgsql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} USING gin (sw_tsv)").format(
            pgsql.Identifier(_object_name(table, "sw_gin")), ref
        )
    )
    if tenant_column:
        conn.execute(
            pgsql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} ({})").format(
                pgsql.Identifier(_object_name(table, "sw_tenant")),
                ref,
                pgsql.Identifier(tenant_column),
            )
        )
    function = pgsql.Identifier("schemawise", _object_name(table, "sw_enqueue"))
    # I1: the row id reaches the outbox in the same transaction as the change; NOTIFY only
    # wakes the worker (it polls too, since a notification can be lost).
    conn.execute(
        pgsql.SQL(
            "CREATE OR REPLACE FUNCTION {}() RETURNS trigger LANGUAGE plpgsql AS $fn$ BEGIN "
            "INSERT INTO schemawise.rows_outbox (table_name, row_key) VALUES ({}, NEW.{}::text); "
            "PERFORM pg_notify({}, {}); RETURN NEW; END $fn$"
        ).format(
            function,
            pgsql.Literal(table),
            pgsql.Identifier(key),
            pgsql.Literal(CHANNEL),
            pgsql.Literal(table),
        )
    )
    conn.execute(pgsql.SQL("DROP TRIGGER IF EXISTS sw_rows_enqueue ON {}").format(ref))
    conn.execute(
        pgsql.SQL(
            "CREATE TRIGGER sw_rows_enqueue AFTER INSERT OR UPDATE OF {} ON {} "
            "FOR EACH ROW EXECUTE FUNCTION {}()"
        ).format(pgsql.SQL(", ").join(pgsql.Identifier(c) for c in text_columns), ref, function)
    )
    conn.execute(
        "INSERT INTO schemawise.rows_config (table_name, key_column, key_type, text_columns, "
        "tenant_column, model, dim) VALUES (%s, %s, %s, %s, %s, %s, %s) "
        "ON CONFLICT (table_name) DO UPDATE SET key_column = EXCLUDED.key_column, "
        "key_type = EXCLUDED.key_type, text_columns = EXCLUDED.text_columns, "
        "tenant_column = EXCLUDED.tenant_column, model = EXCLUDED.model, dim = EXCLUDED.dim, "
        "threshold = CASE WHEN rows_config.model = EXCLUDED.model THEN rows_config.threshold END, "
        "gate_threshold = CASE WHEN rows_config.model = EXCLUDED.model "
        "THEN rows_config.gate_threshold END, "
        "calibrated_at = CASE WHEN rows_config.model = EXCLUDED.model "
        "THEN rows_config.calibrated_at END",
        (table, key, key_type, text_columns, tenant_column, model, dim),
    )
    enqueued = 0
    if changed_model or changed_text:
        config = load_config(conn, table)
        cursor = conn.execute(
            pgsql.SQL(
                "INSERT INTO schemawise.rows_outbox (table_name, row_key) "
                "SELECT {}, {}::text FROM {}"
            ).format(pgsql.Literal(table), config.key(), ref)
        )
        enqueued = cursor.rowcount
    return EnableReport(
        table, text_columns, tenant_column, model, dim, "", False, enqueued, changed_model
    )


def _tsv_lacks_simple(conn: psycopg.Connection[Any], table: str) -> bool:
    """An sw_tsv written by an earlier release (stemmed words only) is built again."""
    row = conn.execute(
        "SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d JOIN pg_attribute a "
        "ON a.attrelid = d.adrelid AND a.attnum = d.adnum "
        "WHERE d.adrelid = %s::regclass AND a.attname = 'sw_tsv'",
        (table,),
    ).fetchone()
    return row is not None and "'simple'" not in str(row[0])


def enable_row_security(conn: psycopg.Connection[Any], table: str, tenant_column: str) -> None:
    """Scope every query schemawise runs to the caller's tenant, with Postgres row-level
    security: a RESTRICTIVE policy for the readers' group only, and a permissive one for
    everyone else so that other applications see the table as before. The tenant is the one
    of the role the run logs in as (`schemawise.current_tenant()`, db/tenancy.py), which SQL
    text cannot change; the plain reader, bound to no tenant, sees no rows at all."""
    from schemawise.db.tenancy import READERS_GROUP

    schema, name = table.split(".", 1)
    ref = pgsql.Identifier(schema, name)
    conn.execute(pgsql.SQL("ALTER TABLE {} ENABLE ROW LEVEL SECURITY").format(ref))
    for policy in ("sw_everyone", "sw_tenant_only"):
        conn.execute(
            pgsql.SQL("DROP POLICY IF EXISTS {} ON {}").format(pgsql.Identifier(policy), ref)
        )
    conn.execute(pgsql.SQL("CREATE POLICY sw_everyone ON {} USING (true)").format(ref))
    conn.execute(
        pgsql.SQL(
            "CREATE POLICY sw_tenant_only ON {} AS RESTRICTIVE FOR SELECT TO {} "
            "USING ({}::text = schemawise.current_tenant())"
        ).format(ref, pgsql.Identifier(READERS_GROUP), pgsql.Identifier(tenant_column))
    )


def disable(url: str, table: str) -> bool:
    parsed = parse_url(url)
    target = parsed.target
    if parsed.kind == "embedded":
        from schemawise.db.embedded import admin_url

        target = admin_url(parsed.target)
    table = qualified(table)
    with psycopg.connect(target) as conn:
        config = load_config(conn, table)
        ref = config.ref()
        conn.execute(pgsql.SQL("DROP TRIGGER IF EXISTS sw_rows_enqueue ON {}").format(ref))
        conn.execute(
            pgsql.SQL("DROP FUNCTION IF EXISTS {}()").format(
                pgsql.Identifier("schemawise", _object_name(table, "sw_enqueue"))
            )
        )
        conn.execute(pgsql.SQL("ALTER TABLE {} DISABLE ROW LEVEL SECURITY").format(ref))
        for policy in ("sw_everyone", "sw_tenant_only"):
            conn.execute(
                pgsql.SQL("DROP POLICY IF EXISTS {} ON {}").format(pgsql.Identifier(policy), ref)
            )
        for column in ("sw_tsv", "sw_embedding", "sw_text_hash"):
            conn.execute(
                pgsql.SQL("ALTER TABLE {} DROP COLUMN IF EXISTS {}").format(
                    ref, pgsql.Identifier(column)
                )
            )
        if config.tenant_column:
            conn.execute(
                pgsql.SQL("DROP INDEX IF EXISTS {}").format(
                    pgsql.Identifier(config.schema_name, _object_name(table, "sw_tenant"))
                )
            )
        conn.execute("DELETE FROM schemawise.rows_outbox WHERE table_name = %s", (table,))
        conn.execute("DELETE FROM schemawise.rows_config WHERE table_name = %s", (table,))
    return True
