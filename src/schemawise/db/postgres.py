"""PostgreSQL: the catalog in a handful of set-based queries over pg_catalog."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import sql as pgsql

from schemawise.db.base import Catalog, ForeignKey, QueryFailedError, Source
from schemawise.db.urls import password_hint, redact
from schemawise.errors import ConnectionFailedError, PermissionDeniedError, TableNotFoundError
from schemawise.graph.model import Column, Problem, Table, TableKind

# schemawise's own bookkeeping (index, row-search queue) is not part of anyone's schema.
_SYSTEM_SCHEMAS = "('pg_catalog', 'information_schema', 'pg_toast', 'schemawise')"
_KINDS: dict[str, TableKind] = {
    "r": "table",
    "p": "table",
    "f": "table",
    "v": "view",
    "m": "materialized_view",
}

# Partitions are left out: their parent stands for them, as a query writer should use it.
_RELATIONS = f"""
SELECT c.oid, n.nspname, c.relname, c.relkind, c.reltuples::bigint, obj_description(c.oid),
       has_table_privilege(c.oid, 'SELECT'),
       CASE WHEN c.relkind IN ('v', 'm') THEN pg_get_viewdef(c.oid) END
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'f', 'v', 'm') AND NOT c.relispartition
  AND n.nspname NOT IN {_SYSTEM_SCHEMAS} AND n.nspname NOT LIKE 'pg\\_%%'
  AND (%(schemas)s::text[] IS NULL OR n.nspname = ANY(%(schemas)s::text[]))
ORDER BY n.nspname, c.relname
"""

_COLUMNS = f"""
SELECT a.attrelid, a.attname, format_type(a.atttypid, a.atttypmod), NOT a.attnotnull,
       col_description(a.attrelid, a.attnum)
FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'p', 'f', 'v', 'm')
  AND n.nspname NOT IN {_SYSTEM_SCHEMAS} AND n.nspname NOT LIKE 'pg\\_%%'
  AND (%(schemas)s::text[] IS NULL OR n.nspname = ANY(%(schemas)s::text[]))
ORDER BY a.attrelid, a.attnum
"""

# Primary keys, unique constraints and foreign keys, with column names in key order.
_CONSTRAINTS = f"""
SELECT con.contype, con.conrelid, con.confrelid, con.conname,
       ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY k(attnum, ord)
             JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum
             ORDER BY k.ord),
       ARRAY(SELECT a.attname FROM unnest(con.confkey) WITH ORDINALITY k(attnum, ord)
             JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum
             ORDER BY k.ord)
FROM pg_constraint con
JOIN pg_class c ON c.oid = con.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE con.contype IN ('p', 'u', 'f') AND n.nspname NOT IN {_SYSTEM_SCHEMAS}
  AND (%(schemas)s::text[] IS NULL OR n.nspname = ANY(%(schemas)s::text[]))
ORDER BY con.conrelid, con.conname
"""

# Unique indexes that no constraint owns (plain columns, no predicate): keys all the same.
_UNIQUE_INDEXES = f"""
SELECT i.indrelid,
       ARRAY(SELECT a.attname FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(attnum, ord)
             JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
             ORDER BY k.ord)
FROM pg_index i
JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE i.indisunique AND NOT i.indisprimary AND i.indpred IS NULL
  AND NOT (0 = ANY(i.indkey::int2[]))
  AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = i.indexrelid)
  AND n.nspname NOT IN {_SYSTEM_SCHEMAS}
  AND (%(schemas)s::text[] IS NULL OR n.nspname = ANY(%(schemas)s::text[]))
"""


def connect_explained(url: str, failed: str, hint: str, **options: Any) -> psycopg.Connection[Any]:
    """A connection, or ConnectionFailedError saying `failed` the URL (password hidden), why,
    and the hint: a server that is not there, or a URL that is not one, is the user's to fix."""
    try:
        return psycopg.connect(url, **options)
    except (psycopg.OperationalError, psycopg.ProgrammingError) as exc:  # also a malformed URL
        why = str(exc).strip()
        if "password" in why.lower():  # a login refused: say where a password may come from
            hint += password_hint(url)
        raise ConnectionFailedError(f"{failed} {redact(url)}: {why}", hint) from exc


class PostgresSource(Source):
    dialect = "postgres"
    enforces_foreign_keys = True

    def __init__(self, url: str, *, schemas: list[str] | None = None) -> None:
        super().__init__()
        self.url = url
        self.display_url = redact(url)
        self.schemas = schemas
        self.conn = connect_explained(
            url, "Could not connect to",
            "Check that the server is running, the host and port are right, and the user may "
            "log in; for schemawise's own database run `schemawise db start`.",
            autocommit=True, connect_timeout=10,
        )  # fmt: skip

    def _check_schemas(self) -> None:
        """A --schema that does not exist is a typo to report, not an empty graph."""
        if not self.schemas:
            return
        rows = self.conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname !~ '^(pg_|information_schema$)' "
            "ORDER BY nspname"
        ).fetchall()
        existing = [r[0] for r in rows]
        missing = [s for s in self.schemas if s not in existing]
        if missing:
            raise TableNotFoundError(
                f"No schema {', '.join(missing)} in {self.display_url}.",
                f"Schemas there: {', '.join(existing) or 'none'}.",
            )

    def read_catalog(self) -> Catalog:
        self._check_schemas()
        params = {"schemas": self.schemas}
        try:
            with self.conn.cursor() as cur:
                relations = cur.execute(_RELATIONS, params).fetchall()
                columns = cur.execute(_COLUMNS, params).fetchall()
                constraints = cur.execute(_CONSTRAINTS, params).fetchall()
                unique_indexes = cur.execute(_UNIQUE_INDEXES, params).fetchall()
        except psycopg.errors.InsufficientPrivilege as exc:
            raise PermissionDeniedError(
                f"Reading the catalog of {self.display_url} was refused: {exc}",
                "Connect as a user that may read pg_catalog (any ordinary role can).",
            ) from exc
        except psycopg.Error as exc:
            raise ConnectionFailedError(
                f"Reading the catalog of {self.display_url} failed: {exc}",
                "Check the connection and retry.",
            ) from exc

        catalog = Catalog()
        by_oid: dict[int, Table] = {}
        for oid, schema, name, relkind, reltuples, comment, readable, viewdef in relations:
            full_name = f"{schema}.{name}"
            self.register_table(full_name, schema, name)
            table = Table(
                name=full_name,
                kind=_KINDS[relkind],
                # reltuples is -1 until the table is first analysed: unknown, not zero.
                row_count=int(reltuples) if reltuples is not None and reltuples >= 0 else None,
                comment=comment,
            )
            by_oid[oid] = table
            catalog.tables.append(table)
            if viewdef:
                catalog.view_definitions[full_name] = viewdef
            if not readable:
                catalog.problems.append(
                    Problem(
                        table=full_name,
                        stage="catalog",
                        message=f"permission denied: cannot SELECT from {full_name}",
                        hint=f"GRANT SELECT ON {full_name} TO the connecting role, or ignore: "
                        "its structure is known but its data checks are skipped.",
                    )
                )
        for oid, name, type_name, nullable, comment in columns:
            if oid in by_oid:
                by_oid[oid].columns.append(
                    Column(name=name, type=type_name, nullable=nullable, comment=comment)
                )
        for contype, rel, frel, _name, cols, fcols in constraints:
            owner = by_oid.get(rel)
            if owner is None:
                continue
            table = owner
            if contype == "p":
                table.primary_key = list(cols)
            elif contype == "u":
                table.unique.append(list(cols))
            elif contype == "f" and frel in by_oid:
                catalog.foreign_keys.append(
                    ForeignKey(table.name, tuple(cols), by_oid[frel].name, tuple(fcols))
                )
            elif contype == "f" and self.schemas:
                # A declared key into a schema not read (--schema): said, not silently lost.
                catalog.problems.append(
                    Problem(
                        table=table.name,
                        stage="catalog",
                        message=f"{table.name} ({', '.join(cols)}) references a table outside "
                        f"the schemas read ({', '.join(self.schemas)}): that join is left out",
                        hint="Add the other table's schema with another --schema to keep it.",
                    )
                )
        for rel, cols in unique_indexes:
            if rel in by_oid and list(cols) not in by_oid[rel].unique:
                by_oid[rel].unique.append(list(cols))
        return catalog

    def query(
        self, sql: str, params: Sequence[Any] = (), timeout_ms: int = 5000
    ) -> list[tuple[Any, ...]]:
        try:
            with self.conn.transaction(), self.conn.cursor() as cur:
                cur.execute(pgsql.SQL("SET LOCAL statement_timeout = {}").format(int(timeout_ms)))
                cur.execute(sql, params or None)
                return cur.fetchall()
        except psycopg.errors.QueryCanceled as exc:
            raise QueryFailedError(str(exc), kind="timeout") from exc
        except psycopg.errors.InsufficientPrivilege as exc:
            raise QueryFailedError(str(exc), kind="permission") from exc
        except psycopg.errors.UndefinedTable as exc:
            raise QueryFailedError(str(exc), kind="missing") from exc
        except psycopg.OperationalError as exc:
            raise QueryFailedError(str(exc), kind="connection") from exc
        except psycopg.Error as exc:
            raise QueryFailedError(str(exc)) from exc

    def sample_clause(self, limit: int) -> str:
        return f"LIMIT {int(limit)}"

    def text_cast(self, expression: str) -> str:
        return f"({expression})::text"

    def close(self) -> None:
        self.conn.close()
