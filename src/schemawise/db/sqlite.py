"""SQLite files, opened read-only; the catalog through the pragma table-valued functions."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from schemawise.db.base import Catalog, ForeignKey, QueryFailedError, Source
from schemawise.db.urls import missing_file
from schemawise.errors import ConnectionFailedError, NotADatabaseError
from schemawise.graph.model import Column, Problem, Table

_OBJECTS = """
SELECT name, type, sql FROM sqlite_master
WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
ORDER BY name
"""
_COLUMNS = """
SELECT m.name, p.name, p.type, p."notnull", p.pk
FROM sqlite_master m JOIN pragma_table_info(m.name) p
WHERE m.type IN ('table', 'view') AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
ORDER BY m.name, p.cid
"""
_UNIQUE_INDEXES = """
SELECT m.name, il.name, il.origin, ii.name
FROM sqlite_master m JOIN pragma_index_list(m.name) il JOIN pragma_index_info(il.name) ii
WHERE m.type = 'table' AND il."unique" = 1 AND il.partial = 0
ORDER BY m.name, il.name, ii.seqno
"""
_FOREIGN_KEYS = """
SELECT m.name, fk.id, fk."table", fk."from", fk."to"
FROM sqlite_master m JOIN pragma_foreign_key_list(m.name) fk
WHERE m.type = 'table'
ORDER BY m.name, fk.id, fk.seq
"""


class SQLiteSource(Source):
    dialect = "sqlite"

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path
        self.display_url = f"sqlite:///{path}"
        if not Path(path).is_file():
            raise ConnectionFailedError(
                f"No SQLite file at {missing_file(path)}.",
                "Check the path; sqlite:///relative/path and sqlite:////absolute/path both work.",
            )
        try:
            self.conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            self.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as exc:
            raise NotADatabaseError(
                f"{path} is not a SQLite database ({exc}).",
                "Point schemawise at a .sqlite file, or use duckdb:/// for a DuckDB file.",
            ) from exc

    def read_catalog(self) -> Catalog:
        catalog = Catalog()
        tables: dict[str, Table] = {}
        for name, kind, sql in self.conn.execute(_OBJECTS):
            self.register_table(name, None, name)
            table = Table(name=name, kind="view" if kind == "view" else "table")
            tables[name] = table
            catalog.tables.append(table)
            if kind == "view" and sql:
                catalog.view_definitions[name] = sql
        pk_parts: dict[str, list[tuple[int, str]]] = {}
        for table_name, col, type_name, notnull, pk in self.conn.execute(_COLUMNS):
            tables[table_name].columns.append(
                Column(name=col, type=type_name or "", nullable=not notnull)
            )
            if pk:
                pk_parts.setdefault(table_name, []).append((pk, col))
        for table_name, parts in pk_parts.items():
            tables[table_name].primary_key = [c for _, c in sorted(parts)]
        indexes: dict[tuple[str, str], list[str]] = {}
        for table_name, index_name, origin, col in self.conn.execute(_UNIQUE_INDEXES):
            if origin != "pk" and col is not None:
                indexes.setdefault((table_name, index_name), []).append(col)
        for (table_name, _), cols in indexes.items():
            if cols not in tables[table_name].unique:
                tables[table_name].unique.append(cols)
        self._read_foreign_keys(catalog, tables)
        self._count_rows(catalog, tables)
        return catalog

    def _read_foreign_keys(self, catalog: Catalog, tables: dict[str, Table]) -> None:
        grouped: dict[tuple[str, int], tuple[str, list[str], list[str | None]]] = {}
        for table_name, fk_id, parent, child_col, parent_col in self.conn.execute(_FOREIGN_KEYS):
            entry = grouped.setdefault((table_name, fk_id), (parent, [], []))
            entry[1].append(child_col)
            entry[2].append(parent_col)
        lowered = {name.lower(): name for name in tables}
        seen: set[ForeignKey] = set()
        for (table_name, _), (parent, child_cols, parent_cols) in grouped.items():
            parent_name = lowered.get(parent.lower())
            resolved = (
                _resolve_parent_columns(tables[parent_name], parent_cols) if parent_name else None
            )
            if parent_name is None or resolved is None or len(resolved) != len(child_cols):
                # SQLite accepts references to tables and columns that do not exist.
                catalog.problems.append(
                    Problem(
                        table=table_name,
                        stage="catalog",
                        message=f"foreign key {table_name}({', '.join(child_cols)}) references "
                        f"{parent}({', '.join(c or '?' for c in parent_cols)}), which does not "
                        "exist; the key was left out of the graph",
                        hint="Fix the declaration in the schema; joins may still be inferred.",
                    )
                )
                continue
            fk = ForeignKey(table_name, tuple(child_cols), parent_name, tuple(resolved))
            if fk not in seen:
                seen.add(fk)
                catalog.foreign_keys.append(fk)

    def _count_rows(self, catalog: Catalog, tables: dict[str, Table]) -> None:
        for table in tables.values():
            if table.kind != "table":
                continue
            try:
                rows = self.query(f"SELECT count(*) FROM {self.table_ref(table.name)}")
                table.row_count = int(rows[0][0])
            except QueryFailedError:
                table.row_count = None

    def query(
        self, sql: str, params: Sequence[Any] = (), timeout_ms: int = 5000
    ) -> list[tuple[Any, ...]]:
        deadline = time.monotonic() + timeout_ms / 1000
        # The progress handler aborts a statement that runs past its deadline.
        self.conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        try:
            return list(self.conn.execute(sql, tuple(params)).fetchall())
        except sqlite3.OperationalError as exc:
            kind = "timeout" if "interrupted" in str(exc) else "missing"
            raise QueryFailedError(str(exc), kind=kind) from exc
        except sqlite3.Error as exc:
            raise QueryFailedError(str(exc)) from exc
        finally:
            self.conn.set_progress_handler(None, 0)

    def close(self) -> None:
        self.conn.close()


def _resolve_parent_columns(parent: Table, parent_cols: list[str | None]) -> list[str] | None:
    """A reference without columns means the parent's primary key; names match case-blind."""
    if all(c is None for c in parent_cols):
        return list(parent.primary_key) or None
    resolved = []
    for col in parent_cols:
        column = parent.column(col) if col else None
        if column is None:
            return None
        resolved.append(column.name)
    return resolved
