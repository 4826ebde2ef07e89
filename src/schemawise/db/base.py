"""What every database source offers: its catalog, and bounded read queries for data checks."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from schemawise.graph.model import Problem, Table


@dataclass(frozen=True)
class ForeignKey:
    child_table: str
    child_columns: tuple[str, ...]
    parent_table: str
    parent_columns: tuple[str, ...]


@dataclass
class Catalog:
    """Everything read from the database's own catalog, before any inference."""

    tables: list[Table] = field(default_factory=list)
    foreign_keys: list[ForeignKey] = field(default_factory=list)
    view_definitions: dict[str, str] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)


class QueryFailedError(Exception):
    """A data-check query failed: timeout, permission or a vanished table. Never user-facing."""

    def __init__(self, message: str, *, kind: str = "error") -> None:
        super().__init__(message)
        self.kind = kind


class Source(ABC):
    """A connected database. Dialect names are sqlglot's."""

    dialect: str
    display_url: str
    # Whether the database refuses a row whose declared foreign key has no parent: then a
    # declared join has no orphans to look for (SQLite leaves it off unless asked per
    # connection, so rows loaded elsewhere may break it).
    enforces_foreign_keys: bool = False

    def __init__(self) -> None:
        # graph name -> (schema or None, table) so quoting never splits a name on a dot.
        self._refs: dict[str, tuple[str | None, str]] = {}

    @abstractmethod
    def read_catalog(self) -> Catalog: ...

    @abstractmethod
    def query(
        self, sql: str, params: Sequence[Any] = (), timeout_ms: int = 5000
    ) -> list[tuple[Any, ...]]:
        """Run one read query for a data check; raise QueryFailedError on any database error."""

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def quote(self, identifier: str) -> str:
        return '"' + identifier.replace('"', '""') + '"'

    def table_ref(self, name: str) -> str:
        schema, table = self._refs.get(name, (None, name))
        return f"{self.quote(schema)}.{self.quote(table)}" if schema else self.quote(table)

    def register_table(self, name: str, schema: str | None, table: str) -> None:
        self._refs[name] = (schema, table)

    def sample_clause(self, limit: int) -> str:
        return f"LIMIT {int(limit)}"

    def text_cast(self, expression: str) -> str:
        """Cast to text so that value checks compare across column types without errors."""
        return f"CAST({expression} AS TEXT)"
