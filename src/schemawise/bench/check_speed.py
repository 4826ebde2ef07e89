"""`check` latency on a large catalog: a synthetic graph of N tables (the same shape as
`bench extract`'s catalogs), and typical join-and-aggregate queries along its edges."""

from __future__ import annotations

import random
import time
from typing import Any

from schemawise.bench.extract_scale import COLUMNS_PER_TABLE, table_name
from schemawise.bench.timing import percentiles
from schemawise.graph.model import Column, Edge, SchemaGraph, Table
from schemawise.validate.check import check_sql


def synthetic_graph(tables: int, seed: int = 11) -> SchemaGraph:
    rng = random.Random(seed)
    graph = SchemaGraph(dialect="postgres", source="synthetic")
    for i in range(tables):
        name = f"synth.{table_name(i)}"
        columns = [Column(name="id", type="integer", nullable=False)]
        parents = sorted({rng.randrange(0, i) for _ in range(rng.choice([1, 2]))}) if i else []
        for parent in parents:
            column = f"{table_name(parent)}_id"
            columns.append(Column(name=column, type="integer"))
            graph.edges.append(
                Edge(child_table=name, child_columns=[column],
                     parent_table=f"synth.{table_name(parent)}", parent_columns=["id"])
            )  # fmt: skip
        while len(columns) < COLUMNS_PER_TABLE:
            columns.append(Column(name=f"attr_{len(columns)}", type="numeric"))
        graph.tables.append(Table(name=name, primary_key=["id"], columns=columns))
    return graph


def typical_queries(graph: SchemaGraph, count: int, seed: int = 5) -> list[str]:
    """A child joined to its parent (and that parent's parent), filtered, grouped, summed."""
    rng = random.Random(seed)
    queries = []
    edges = [e for e in graph.edges]
    for _ in range(count):
        edge = rng.choice(edges)
        child, parent = edge.child_table, edge.parent_table
        sql = (
            f"SELECT p.attr_3, sum(c.attr_5) AS total, count(*) AS n FROM {child} c "
            f"JOIN {parent} p ON c.{edge.child_columns[0]} = p.id"
        )
        grand = next((e for e in edges if e.child_table == parent), None)
        if grand is not None:
            sql += f" JOIN {grand.parent_table} g ON p.{grand.child_columns[0]} = g.id"
        sql += " WHERE c.attr_4 > 10 GROUP BY p.attr_3 ORDER BY total DESC LIMIT 20"
        queries.append(sql)
    return queries


def run(tables: int = 2000, queries: int = 300) -> dict[str, Any]:
    graph = synthetic_graph(tables)
    sqls = typical_queries(graph, queries)
    check_sql(sqls[0], graph)  # warm the graph's lookups, as a server would be warm
    latencies, errors = [], 0
    for sql in sqls:
        started = time.perf_counter()
        result = check_sql(sql, graph)
        latencies.append(time.perf_counter() - started)
        errors += not result.ok
    return {
        "tables": len(graph.tables),
        "columns": sum(len(t.columns) for t in graph.tables),
        "edges": len(graph.edges),
        "queries": len(sqls),
        "queries_with_errors": errors,
        "check_latency_seconds": percentiles(latencies),
    }
