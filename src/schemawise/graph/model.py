"""The schema graph's data model, which is also its stable JSON contract (docs/json.md)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field, PrivateAttr

T = TypeVar("T")

TableKind = Literal["table", "view", "materialized_view"]
Cardinality = Literal["one_to_one", "many_to_one", "many_to_many"]
EdgeSource = Literal[
    "foreign_key",
    "inferred_name",
    "query_log",
    "value_overlap",
    "view_lineage",
    "dbt_relationship",
    "overlay",
]
CardinalityBasis = Literal["declared", "measured", "declared+measured", "assumed"]


class Column(BaseModel):
    name: str
    type: str
    nullable: bool = True
    comment: str | None = None


class Table(BaseModel):
    name: str
    kind: TableKind = "table"
    row_count: int | None = None
    primary_key: list[str] = Field(default_factory=list)
    unique: list[list[str]] = Field(default_factory=list)
    columns: list[Column] = Field(default_factory=list)
    comment: str | None = None
    # Base tables a view or materialized view reads, parsed from its definition.
    reads: list[str] = Field(default_factory=list)
    # For one entry standing for a sharded family (`events_*`): its member tables, oldest first.
    shards: list[str] = Field(default_factory=list)

    def column(self, name: str) -> Column | None:
        lowered = name.lower()
        for column in self.columns:
            if column.name.lower() == lowered:
                return column
        return None

    def is_declared_unique(self, columns: list[str]) -> bool:
        """True when a primary key or unique constraint is a subset of `columns`."""
        wanted = {c.lower() for c in columns}
        keys = [self.primary_key, *self.unique]
        return any(key and {c.lower() for c in key} <= wanted for key in keys)


class Evidence(BaseModel):
    """Why an edge exists and why it has its cardinality."""

    cardinality_basis: CardinalityBasis = "assumed"
    parent_unique: bool | None = None
    child_unique: bool | None = None
    # True when a side was measured on a sample rather than the whole table.
    sampled: bool = False
    # Share of distinct child values found in the parent (value inclusion check).
    inclusion: float | None = None
    # How many queries in the log joined on this pair.
    query_log_joins: int | None = None
    rule: str | None = None
    notes: list[str] = Field(default_factory=list)


class Edge(BaseModel):
    child_table: str
    child_columns: list[str]
    parent_table: str
    parent_columns: list[str]
    cardinality: Cardinality = "many_to_one"
    source: EdgeSource = "foreign_key"
    confidence: float = 1.0
    evidence: Evidence = Field(default_factory=Evidence)
    # For a many-to-many relationship through a bridge table: the bridge.
    via: str | None = None

    def key(self) -> tuple[str, tuple[str, ...], str, tuple[str, ...]]:
        return (
            self.child_table.lower(),
            tuple(c.lower() for c in self.child_columns),
            self.parent_table.lower(),
            tuple(c.lower() for c in self.parent_columns),
        )

    def unordered_key(self) -> frozenset[tuple[str, tuple[str, ...]]]:
        """The same join whichever side is called the parent."""
        child, child_cols, parent, parent_cols = self.key()
        return frozenset({(child, child_cols), (parent, parent_cols)})

    def describe(self) -> str:
        left = ", ".join(f"{self.child_table}.{c}" for c in self.child_columns)
        right = ", ".join(f"{self.parent_table}.{c}" for c in self.parent_columns)
        return f"{left} → {right}"


class Problem(BaseModel):
    """Something that went wrong on part of the input; the rest of the result still stands."""

    table: str | None = None
    stage: str
    message: str
    hint: str = ""


def unreadable_tables(problems: list[Problem]) -> set[str]:
    """The tables the catalogue found the connecting role may not read (db/postgres.py says so
    as a `catalog` problem): their structure is known, their rows are not."""
    return {
        p.table
        for p in problems
        if p.table and p.stage == "catalog" and "permission denied" in p.message
    }


class SchemaGraph(BaseModel):
    source: str = ""
    dialect: str = ""
    tables: list[Table] = Field(default_factory=list)
    edges: list[Edge] = Field(default_factory=list)
    version: str = ""
    # A graph built with problems (a table that vanished, a permission denied) is partial.
    partial: bool = False
    problems: list[Problem] = Field(default_factory=list)
    # `structure_version` as the catalogue alone gave it, when the overlay has since denied or
    # restated a declared join (enrich/apply.py): what the database's catalogue is compared to.
    catalog_fingerprint: str = ""
    _lookup_cache: dict[str, Table] = PrivateAttr(default_factory=dict)
    _lookup_stamp: tuple[int, int] = PrivateAttr(default=(-1, 0))
    _derived: dict[str, tuple[tuple[int, ...], Any]] = PrivateAttr(default_factory=dict)

    def cached(self, key: str, factory: Callable[[SchemaGraph], T]) -> T:
        """A structure derived from the graph (an index, a sqlglot schema), rebuilt only when
        tables or edges are added or replaced: checks run many times against one graph."""
        stamp = (len(self.tables), id(self.tables), len(self.edges), id(self.edges))
        hit = self._derived.get(key)
        if hit is None or hit[0] != stamp:
            hit = (stamp, factory(self))
            self._derived[key] = hit
        return hit[1]

    def table(self, name: str) -> Table | None:
        """A table by its full name, or by its bare name when that is unambiguous."""
        lowered = name.lower()
        return self._lookup().get(lowered) or self._lookup().get("\0" + lowered)

    def _lookup(self) -> dict[str, Table]:
        # Rebuilt only when the list of tables changes: lookups run once per edge and check.
        stamp = (len(self.tables), id(self.tables))
        if self._lookup_stamp != stamp:
            index: dict[str, Table] = {t.name.lower(): t for t in self.tables}
            bare: dict[str, list[Table]] = {}
            for t in self.tables:
                bare.setdefault(t.name.rsplit(".", 1)[-1].lower(), []).append(t)
            index.update({"\0" + k: v[0] for k, v in bare.items() if len(v) == 1})
            self._lookup_cache, self._lookup_stamp = index, stamp
        return self._lookup_cache

    def structure_version(self) -> str:
        """A fingerprint of what the catalogue alone says (tables, columns, keys, declared
        references): cheap to recompute from the database without inferring or measuring
        anything, so a stored graph can be checked for staleness in one catalogue read."""
        if self.catalog_fingerprint:
            return self.catalog_fingerprint
        return structure_fingerprint(
            self.tables,
            [
                (e.child_table, e.child_columns, e.parent_table, e.parent_columns)
                for e in self.edges
                if e.source == "foreign_key" and e.via is None
            ],
        )

    def compute_version(self) -> str:
        """A fingerprint of the structure: changes when a table, column or key changes."""
        payload = {
            "tables": [
                [t.name, t.kind, t.primary_key, t.unique, [[c.name, c.type] for c in t.columns]]
                for t in sorted(self.tables, key=lambda t: t.name)
            ],
            "edges": sorted(json.dumps(e.key()) for e in self.edges),
        }
        digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
        return digest[:16]

    def to_json(self, indent: int | None = 2) -> str:
        return self.model_dump_json(indent=indent)

    @classmethod
    def from_json(cls, text: str) -> SchemaGraph:
        return cls.model_validate_json(text)


def structure_fingerprint(
    tables: list[Table], references: list[tuple[str, list[str], str, list[str]]]
) -> str:
    payload = {
        "tables": [
            [t.name, t.kind, t.primary_key, sorted(t.unique), [[c.name, c.type] for c in t.columns]]
            for t in sorted(tables, key=lambda t: t.name)
        ],
        "references": sorted(json.dumps([c, list(cc), p, list(pc)]) for c, cc, p, pc in references),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]
