"""Extraction at scale: synthetic Postgres catalogs of N tables, timed and memory-profiled."""

from __future__ import annotations

import random
import resource
import time
from collections.abc import Callable
from typing import Any

import psycopg

from schemawise.bench.scratch import scratch_database
from schemawise.db.postgres import PostgresSource
from schemawise.graph.extract import ExtractOptions, extract_graph
from schemawise.graph.model import SchemaGraph

NOUNS = [
    "customer", "order", "product", "invoice", "payment", "shipment", "supplier", "employee",
    "account", "contract", "ticket", "campaign", "lead", "store", "warehouse", "vehicle",
    "route", "device", "sensor", "reading", "policy", "claim", "patient", "visit", "doctor",
    "course", "student", "teacher", "booking", "room", "flight", "airport", "project", "task",
    "budget", "asset", "license", "vendor", "region", "channel",
]  # fmt: skip
COLUMNS_PER_TABLE = 20
ROWS_PER_TABLE = 30
CHUNK = 200


def table_name(i: int) -> str:
    return f"{NOUNS[i % len(NOUNS)]}_{i // len(NOUNS)}"


def catalog_sql(
    schema: str, tables: int, seed: int = 11
) -> tuple[list[str], int, set[tuple[str, str, str]]]:
    """DDL and rows for `tables` tables of 20 columns with ~1.6 references each; returns the
    statements, the number of declared foreign keys and the undeclared references
    (child table, column, parent table)."""
    rng = random.Random(seed)
    statements = [f'DROP SCHEMA IF EXISTS "{schema}" CASCADE', f'CREATE SCHEMA "{schema}"']
    fks = 0
    undeclared: set[tuple[str, str, str]] = set()
    for i in range(tables):
        name = table_name(i)
        columns = ["id integer PRIMARY KEY"]
        refs = []
        if i > 0:
            for _ in range(rng.choice([1, 1, 2, 2, 2])):
                parent = rng.randrange(0, i)
                if parent not in refs:
                    refs.append(parent)
        for n, parent in enumerate(refs):
            # Every fifth reference is left undeclared, as in warehouses: inference must find it.
            declared = (i + n) % 5 != 0
            constraint = f' REFERENCES "{schema}".{table_name(parent)}(id)' if declared else ""
            columns.append(f"{table_name(parent)}_id integer{constraint}")
            fks += declared
            if not declared:
                undeclared.add(
                    (
                        f"{schema}.{name}",
                        f"{table_name(parent)}_id",
                        f"{schema}.{table_name(parent)}",
                    )
                )
        while len(columns) < COLUMNS_PER_TABLE:
            kind = rng.choice(["text", "integer", "numeric(12,2)", "timestamptz", "boolean"])
            columns.append(f"attr_{len(columns)} {kind}")
        statements.append(f'CREATE TABLE "{schema}".{name} ({", ".join(columns)})')
        ref_values = ", ".join(f"1 + (g % {ROWS_PER_TABLE})" for _ in refs)
        statements.append(
            f'INSERT INTO "{schema}".{name} (id{", " if refs else ""}'
            f"{', '.join(table_name(p) + '_id' for p in refs)}) "
            f"SELECT g{', ' if refs else ''}{ref_values} "
            f"FROM generate_series(1, {ROWS_PER_TABLE}) g"
        )
    return statements, fks, undeclared


def _drop(url: str, schema: str, tables: int) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        for first in range(tables - 1, -1, -CHUNK):
            names = ", ".join(
                f'"{schema}".{table_name(i)}' for i in range(first, max(-1, first - CHUNK), -1)
            )
            conn.execute(f"DROP TABLE IF EXISTS {names} CASCADE")
        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def _inferred_pairs(graph: SchemaGraph) -> set[tuple[str, str, str]]:
    return {
        (e.child_table, e.child_columns[0], e.parent_table)
        for e in graph.edges
        if e.source != "foreign_key" and not e.via and len(e.child_columns) == 1
    }


def _inferred(graph: SchemaGraph) -> int:
    return sum(1 for e in graph.edges if e.source != "foreign_key" and not e.via)


def run(
    sizes: list[int], url: str = "embedded", progress: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """On the embedded server the catalogs are built in a scratch database (dropped after)."""
    if url == "embedded":
        with scratch_database("extract") as scratch:
            return _run(sizes, scratch, "postgres (embedded)", progress)
    return _run(sizes, url, "postgres", progress)


def _run(
    sizes: list[int], target: str, label: str, progress: Callable[[str], None] | None
) -> dict[str, Any]:
    say = progress or (lambda _: None)
    results = []
    for size in sizes:
        schema = f"synth_{size}"
        say(f"building {size} tables")
        statements, fks, undeclared = catalog_sql(schema, size)
        started = time.perf_counter()
        with psycopg.connect(target, autocommit=True) as conn:
            # In slices: one transaction per few hundred tables stays inside the lock table.
            for first in range(0, len(statements), CHUNK):
                conn.execute(";\n".join(statements[first : first + CHUNK]))
            conn.execute("ANALYZE")
        build_seconds = time.perf_counter() - started
        say(f"extracting {size} tables")
        with PostgresSource(target, schemas=[schema]) as source:
            started = time.perf_counter()
            catalog = source.read_catalog()
            catalog_seconds = time.perf_counter() - started
        with PostgresSource(target, schemas=[schema]) as source:
            started = time.perf_counter()
            structure = extract_graph(source, ExtractOptions(data_checks=False))
            structure_seconds = time.perf_counter() - started
            started = time.perf_counter()
            graph = extract_graph(source, ExtractOptions(data_checks=True, budget_seconds=600))
            full_seconds = time.perf_counter() - started
            # Peak resident memory of this process so far (sizes run smallest first).
            peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        _drop(target, schema, size)
        declared = sum(1 for e in graph.edges if e.source == "foreign_key")
        results.append(
            {
                "tables": len(catalog.tables),
                "columns": sum(len(t.columns) for t in catalog.tables),
                "foreign_keys": fks,
                "undeclared_references": len(undeclared),
                # Inferred edges checked against the references the generator left undeclared.
                "undeclared_recovered": len(undeclared & _inferred_pairs(graph)),
                "inferred_not_in_truth": len(_inferred_pairs(graph) - undeclared),
                "edges_declared": declared,
                "edges_inferred_without_data": _inferred(structure),
                "edges_inferred_with_data": _inferred(graph),
                "build_seconds": round(build_seconds, 3),
                "catalog_extraction_seconds": round(catalog_seconds, 3),
                "graph_without_data_checks_seconds": round(structure_seconds, 3),
                "graph_with_data_checks_seconds": round(full_seconds, 3),
                "data_check_seconds": round(full_seconds - structure_seconds, 3),
                "partial": graph.partial,
                "peak_rss_mb": round(peak_mb, 1),
            }
        )
    per_table = [r["graph_with_data_checks_seconds"] / r["tables"] for r in results]
    return {
        "benchmark": "extract",
        "database": label,
        "columns_per_table": COLUMNS_PER_TABLE,
        "rows_per_table": ROWS_PER_TABLE,
        "sizes": results,
        # Seconds per table at each size: flat means cost grows linearly with the catalog.
        "seconds_per_table_with_data_checks": [round(x, 5) for x in per_table],
    }
