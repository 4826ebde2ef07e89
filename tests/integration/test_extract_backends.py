"""Extraction from real SQLite, DuckDB and Postgres databases."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import duckdb
import psycopg
import pytest

from schemawise.db import connect
from schemawise.graph.extract import ExtractOptions, extract_graph
from schemawise.graph.model import SchemaGraph

SCHEMA_SQL = """
CREATE TABLE warehouses (site TEXT, bay INTEGER, capacity INTEGER, PRIMARY KEY (site, bay));
CREATE TABLE pallets (
    pallet_id INTEGER PRIMARY KEY,
    site TEXT NOT NULL,
    bay INTEGER NOT NULL,
    label TEXT UNIQUE,
    FOREIGN KEY (site, bay) REFERENCES warehouses (site, bay)
);
CREATE TABLE scans (scan_id INTEGER PRIMARY KEY, pallet_id INTEGER, scanned TEXT);
CREATE VIEW full_pallets AS SELECT p.pallet_id, p.label, w.capacity
    FROM pallets p JOIN warehouses w ON w.site = p.site AND w.bay = p.bay;
INSERT INTO warehouses VALUES ('ams', 1, 10), ('ams', 2, 20), ('rtm', 1, 30);
INSERT INTO pallets VALUES (1, 'ams', 1, 'A'), (2, 'ams', 1, 'B'), (3, 'rtm', 1, 'C');
INSERT INTO scans VALUES (1, 1, 'x'), (2, 1, 'y'), (3, 2, 'z'), (4, 3, 'w');
"""


def _edges(graph: SchemaGraph) -> dict[tuple[str, tuple[str, ...], str], str]:
    return {
        (
            e.child_table.split(".")[-1],
            tuple(e.child_columns),
            e.parent_table.split(".")[-1],
        ): e.source
        for e in graph.edges
        if e.via is None
    }


def _check_small_schema(graph: SchemaGraph) -> None:
    pallets = graph.table("pallets")
    assert pallets is not None
    assert pallets.primary_key == ["pallet_id"]
    assert ["label"] in pallets.unique
    warehouses = graph.table("warehouses")
    assert warehouses is not None and warehouses.primary_key == ["site", "bay"]
    edges = _edges(graph)
    assert edges[("pallets", ("site", "bay"), "warehouses")] == "foreign_key"  # composite
    assert edges[("scans", ("pallet_id",), "pallets")] == "inferred_name"  # undeclared
    view = graph.table("full_pallets")
    assert view is not None and view.kind == "view"
    assert set(v.split(".")[-1] for v in view.reads) == {"pallets", "warehouses"}
    composite = next(e for e in graph.edges if e.child_columns == ["site", "bay"])
    assert composite.cardinality == "many_to_one"
    assert composite.evidence.cardinality_basis == "declared+measured"


def test_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "small.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(SCHEMA_SQL)
    with connect(f"sqlite:///{path}") as source:
        graph = extract_graph(source)
    _check_small_schema(graph)
    assert graph.dialect == "sqlite"
    assert graph.table("scans").row_count == 4  # type: ignore[union-attr]
    # SQLite does not keep declared keys unless asked per connection: measured for orphans.
    assert _declared_inclusion(graph) == 1.0


def _declared_inclusion(graph: SchemaGraph) -> float | None:
    (declared,) = [e for e in graph.edges if e.source == "foreign_key" and e.via is None]
    return declared.evidence.inclusion


def _make_duckdb(path: Path) -> None:
    conn = duckdb.connect(str(path))
    for statement in SCHEMA_SQL.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.close()


def test_duckdb(tmp_path: Path) -> None:
    path = tmp_path / "small.duckdb"
    _make_duckdb(path)
    with connect(f"duckdb:///{path}") as source:
        graph = extract_graph(source)
    _check_small_schema(graph)
    assert graph.dialect == "duckdb"
    # DuckDB keeps its declared keys: no orphans to look for, no check spent on them.
    assert _declared_inclusion(graph) is None


def test_postgres_user_database(embedded_url: str) -> None:
    """Any Postgres URL works; here a second database on the embedded server."""
    admin = embedded_url.replace("/schemawise?", "/postgres?")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS small")
        conn.execute("CREATE DATABASE small")
    url = embedded_url.replace("/schemawise?", "/small?")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(SCHEMA_SQL.replace("INTEGER PRIMARY KEY", "integer PRIMARY KEY"))
        conn.execute("COMMENT ON COLUMN pallets.label IS 'printed on the pallet'")
        conn.execute("CREATE UNIQUE INDEX scans_scanned ON scans (scanned)")
        conn.execute("ANALYZE")
    with connect(url) as source:
        graph = extract_graph(source)
    _check_small_schema(graph)
    assert graph.table("public.pallets").column("label").comment == "printed on the pallet"  # type: ignore[union-attr]
    assert ["scanned"] in graph.table("public.scans").unique  # type: ignore[union-attr]


def test_chinook_on_postgres(embedded_url: str, bench_dir: Path) -> None:
    script = (bench_dir / "chinook" / "chinook_postgres.sql").read_text()
    body = script.split("\\c chinook;", 1)[1]
    admin = embedded_url.replace("/schemawise?", "/postgres?")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS chinook")
        conn.execute("CREATE DATABASE chinook")
    url = embedded_url.replace("/schemawise?", "/chinook?")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(body)  # type: ignore[arg-type]
    with connect(url) as source:
        graph = extract_graph(source)
    declared = [e for e in graph.edges if e.source == "foreign_key" and e.via is None]
    assert len(graph.tables) == 11
    assert len(declared) == 11
    self_ref = [e for e in declared if e.child_table == e.parent_table]
    assert len(self_ref) == 1  # employee.reports_to
    bridge = [e for e in graph.edges if e.via]
    assert [b.via for b in bridge] == ["public.playlist_track"]
    assert bridge[0].cardinality == "many_to_many"
    assert all(e.cardinality == "many_to_one" for e in declared)


def test_chinook_on_sqlite_matches_declared_keys(bench_dir: Path) -> None:
    with connect(f"sqlite:///{bench_dir / 'chinook' / 'chinook.sqlite'}") as source:
        graph = extract_graph(source)
    declared = [e for e in graph.edges if e.source == "foreign_key" and e.via is None]
    assert len(declared) == 11
    assert not [e for e in graph.edges if e.source not in ("foreign_key",)]
    assert graph.version == graph.compute_version()


@pytest.mark.parametrize("backend", ["sqlite", "duckdb"])
def test_graph_json_round_trip(tmp_path: Path, backend: str) -> None:
    path = tmp_path / f"x.{backend}"
    if backend == "sqlite":
        with sqlite3.connect(path) as conn:
            conn.executescript(SCHEMA_SQL)
    else:
        _make_duckdb(path)
    with connect(f"{backend}:///{path}") as source:
        graph = extract_graph(source, ExtractOptions(data_checks=False))
    again = SchemaGraph.from_json(graph.to_json())
    assert again.model_dump() == graph.model_dump()
