"""DuckDB files, opened read-only with external access off; the catalog from duckdb_* functions."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb

from schemawise.db.base import Catalog, ForeignKey, QueryFailedError, Source
from schemawise.db.urls import missing_file
from schemawise.errors import ConnectionFailedError, NotADatabaseError
from schemawise.graph.model import Column, Table

_TABLES = """
SELECT schema_name, table_name, 'table', estimated_size, comment, NULL FROM duckdb_tables()
WHERE NOT internal AND NOT temporary
UNION ALL
SELECT schema_name, view_name, 'view', NULL, comment, sql FROM duckdb_views()
WHERE NOT internal AND NOT temporary
ORDER BY 1, 2
"""
_COLUMNS = """
SELECT schema_name, table_name, column_name, data_type, is_nullable, comment
FROM duckdb_columns() WHERE NOT internal ORDER BY schema_name, table_name, column_index
"""
_CONSTRAINTS = """
SELECT schema_name, table_name, constraint_type, constraint_column_names,
       referenced_table, referenced_column_names
FROM duckdb_constraints()
WHERE constraint_type IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY')
"""


def open_read_only(path: str) -> duckdb.DuckDBPyConnection:
    """Read-only, no files or network beyond the database, no extension loading, and the
    configuration locked so that a query cannot `SET` any of it back (SECURITY.md, L6)."""
    return duckdb.connect(
        path,
        read_only=True,
        config={
            "enable_external_access": False,
            "autoload_known_extensions": False,
            "autoinstall_known_extensions": False,
            "lock_configuration": True,
        },
    )


class DuckDBSource(Source):
    dialect = "duckdb"
    enforces_foreign_keys = True

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path
        self.display_url = f"duckdb:///{path}"
        if not Path(path).is_file():
            raise ConnectionFailedError(
                f"No DuckDB file at {missing_file(path)}.",
                "Check the path; duckdb:///relative/path and duckdb:////absolute/path both work.",
            )
        try:
            self.conn = open_read_only(path)
        except duckdb.Error as exc:
            raise NotADatabaseError(
                f"{path} could not be opened as a DuckDB database ({exc}).",
                "Point schemawise at a .duckdb file, or use sqlite:/// for a SQLite file.",
            ) from exc

    def _name(self, schema: str, table: str) -> str:
        return table if schema == "main" else f"{schema}.{table}"

    def read_catalog(self) -> Catalog:
        catalog = Catalog()
        tables: dict[tuple[str, str], Table] = {}
        for schema, name, kind, size, comment, sql in self.conn.execute(_TABLES).fetchall():
            full = self._name(schema, name)
            self.register_table(full, schema, name)
            table = Table(
                name=full,
                kind="view" if kind == "view" else "table",
                row_count=int(size) if size is not None else None,
                comment=comment or None,
            )
            tables[(schema, name)] = table
            catalog.tables.append(table)
            if sql:
                catalog.view_definitions[full] = sql
        for schema, name, col, type_name, nullable, comment in self.conn.execute(
            _COLUMNS
        ).fetchall():
            if (schema, name) in tables:
                tables[(schema, name)].columns.append(
                    Column(name=col, type=type_name, nullable=bool(nullable), comment=comment)
                )
        for schema, name, kind, cols, ref_table, ref_cols in self.conn.execute(
            _CONSTRAINTS
        ).fetchall():
            owner = tables.get((schema, name))
            if owner is None:
                continue
            table = owner
            if kind == "PRIMARY KEY":
                table.primary_key = list(cols)
            elif kind == "UNIQUE" and list(cols) not in table.unique:
                table.unique.append(list(cols))
            elif kind == "FOREIGN KEY" and (schema, ref_table) in tables:
                parent = self._name(schema, ref_table)
                catalog.foreign_keys.append(
                    ForeignKey(table.name, tuple(cols), parent, tuple(ref_cols))
                )
        return catalog

    def query(
        self, sql: str, params: Sequence[Any] = (), timeout_ms: int = 5000
    ) -> list[tuple[Any, ...]]:
        # DuckDB has no statement timeout: a timer interrupts the connection instead.
        timer = threading.Timer(timeout_ms / 1000, self.conn.interrupt)
        timer.start()
        try:
            return list(self.conn.execute(sql, list(params)).fetchall())
        except duckdb.InterruptException as exc:
            raise QueryFailedError(str(exc), kind="timeout") from exc
        except duckdb.CatalogException as exc:
            raise QueryFailedError(str(exc), kind="missing") from exc
        except duckdb.Error as exc:
            raise QueryFailedError(str(exc)) from exc
        finally:
            timer.cancel()

    def close(self) -> None:
        self.conn.close()
