"""`bench linking`: schema linking on Spider and BIRD dev — does the context pack hold every
gold table and column, and how small is it — beside the usual tools' approach (one DDL
document per table, top-k by BM25, dense, and fused), on the same index in the same run."""

from __future__ import annotations

import hashlib
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import sqlglot
from pgvector.psycopg import register_vector
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import traverse_scope

from schemawise.bench.timing import percentiles
from schemawise.db.embedded import ensure_started
from schemawise.db.sqlite import SQLiteSource
from schemawise.enrich.dictionary import from_description_csvs, from_tables_json
from schemawise.eval.datasets import Dataset, Example, database_path, load_examples
from schemawise.graph.extract import ExtractOptions, extract_graph
from schemawise.graph.model import SchemaGraph
from schemawise.index import store
from schemawise.index.cards import Document, documents, words
from schemawise.index.embed import get_embedder
from schemawise.retrieve.context import build_context
from schemawise.validate.resolve import find_table, resolve

KS = (1, 3, 5, 10)


def gold_links(sql: str, graph: SchemaGraph) -> tuple[set[str], set[tuple[str, str]]] | None:
    """Tables and (table, column) pairs a gold query uses, resolved against the graph."""
    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except SqlglotError:
        return None
    if not isinstance(tree, exp.Expression):
        return None
    resolution = resolve(tree, graph)
    if resolution.tree is None or resolution.problems:
        return None
    tables = {t.lower() for t in resolution.tables}
    columns: set[tuple[str, str]] = set()
    for scope in traverse_scope(resolution.tree):
        aliases = {
            alias: find_table(graph, node)
            for alias, (_, node) in scope.selected_sources.items()
            if isinstance(node, exp.Table)
        }
        for column in scope.columns:
            table = aliases.get(column.table)
            if table is not None and table.column(column.name) is not None:
                columns.add((table.name.lower(), column.name.lower()))
    return tables, columns


def ddl_document(source: str, graph: SchemaGraph, table_name: str) -> Document:
    table = graph.table(table_name)
    assert table is not None
    cols = ", ".join(f"{c.name} {c.type}" for c in table.columns)
    text = f"CREATE TABLE {table.name} ({cols})"
    lexical = f"{words(table.name)} {' '.join(words(c.name) for c in table.columns)}"
    return Document(
        id=f"{source}:ddl:{table.name}", source=source, kind="ddl", table=table.name,
        column=None, text=text, lexical=lexical,
        fingerprint=hashlib.sha256(text.encode()).hexdigest()[:16],
    )  # fmt: skip


def run(
    dataset: Dataset,
    data: Path,
    *,
    union: bool = False,
    limit: int | None = None,
    baselines: bool = True,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    say = progress or (lambda _: None)
    examples: list[Example] = load_examples(dataset, data)[:limit]
    embedder = get_embedder()
    url = ensure_started()
    graphs: dict[str, SchemaGraph] = {}
    say("extracting graphs")
    for db_id in sorted({e.db_id for e in examples}):
        with SQLiteSource(str(database_path(dataset, data, db_id))) as source:
            graphs[db_id] = extract_graph(source, ExtractOptions(budget_seconds=20))
    started = time.perf_counter()
    with psycopg.connect(url) as conn:
        store.ensure_schema(conn, embedder.dim)
        conn.execute(
            "DELETE FROM schemawise.index_documents WHERE source LIKE %s", (f"{dataset}/%",)
        )
        conn.commit()
        say("indexing")
        indexed = 0
        tables_file = data / ("tables.json" if dataset == "spider" else "dev_tables.json")
        for db_id, graph in graphs.items():
            name = f"{dataset}/{db_id}"
            # The readable column names the dataset ships, and BIRD's description CSVs when
            # present: the data dictionary a team would give the index.
            descriptions = from_tables_json(tables_file, db_id) if tables_file.is_file() else {}
            descriptions.update(
                from_description_csvs(
                    database_path(dataset, data, db_id).parent / "database_description"
                )
            )
            docs = documents(name, graph, descriptions)
            docs += [ddl_document(name, graph, t.name) for t in graph.tables]
            indexed += store.replace_source(conn, name, docs, embedder).embedded
        index_seconds = time.perf_counter() - started
        register_vector(conn)
        pooled = [f"{dataset}/{db_id}" for db_id in graphs]
        rows: list[dict[str, Any]] = []
        baseline_hits: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
        latencies: list[float] = []
        skipped = 0
        for number, example in enumerate(examples):
            if number % 200 == 0:
                say(f"question {number}/{len(examples)}")
            graph = graphs[example.db_id]
            gold = gold_links(example.sql, graph)
            if gold is None or not gold[0]:
                skipped += 1
                continue
            gold_tables, gold_columns = gold
            # Pooled: every database of the dataset, and no hint which one the question is about.
            sources = pooled if union else [f"{dataset}/{example.db_id}"]
            named = {f"{dataset}/{k}": v for k, v in graphs.items()}
            began = time.perf_counter()
            pack = build_context(
                conn, example.question, named, embedder, evidence=example.evidence, sources=sources
            )
            latencies.append(time.perf_counter() - began)
            right_db = pack.source == f"{dataset}/{example.db_id}"
            kept = {t.name.lower() for t in pack.tables} if right_db else set()
            kept_cols = (
                {(c.table.lower(), c.name.lower()) for c in pack.columns} if right_db else set()
            )
            total_cols = sum(len(t.columns) for t in graph.tables)
            rows.append(
                {
                    "strict_table": gold_tables <= kept,
                    "table_recall": len(gold_tables & kept) / len(gold_tables),
                    "strict_column": gold_columns <= kept_cols,
                    "column_recall": len(gold_columns & kept_cols) / len(gold_columns)
                    if gold_columns
                    else 1.0,
                    "tables_kept": len(pack.tables),
                    "table_share": len(pack.tables) / max(1, len(graph.tables)),
                    "columns_kept": len(pack.columns),
                    "column_share": len(pack.columns) / max(1, total_cols),
                    "tokens": pack.tokens,
                    "right_database": right_db,
                }
            )
            if baselines:
                text = f"{example.question} {example.evidence}".strip()
                vector = embedder.embed([text])[0]
                for mode, weights in (
                    ("bm25", (0.0, 1.0)),
                    ("dense", (1.0, 0.0)),
                    ("fused", (1.0, 1.0)),
                ):
                    hits = store.search(
                        conn, text, vector, kinds=("ddl",), sources=sources, n=max(KS),
                        dense_weight=weights[0], lexical_weight=weights[1],
                    )  # fmt: skip
                    ranked = [h.table.lower() for h in hits if h.score > 0]
                    right = [h.source == f"{dataset}/{example.db_id}" for h in hits if h.score > 0]
                    for k in (*KS, "schemawise_k"):
                        size = k if isinstance(k, int) else max(1, len(pack.tables))
                        top = {t for t, ok in zip(ranked[:size], right[:size], strict=True) if ok}
                        baseline_hits[mode][k].append(float(gold_tables <= top))  # type: ignore[index]
    n = len(rows)

    def mean(key: str) -> float:
        return round(float(np.mean([r[key] for r in rows])), 4) if rows else 0.0

    report: dict[str, Any] = {
        "benchmark": "linking",
        "dataset": dataset,
        "union": union,
        "questions": n,
        "skipped_unresolvable_gold": skipped,
        "databases": len(graphs),
        "documents_indexed": indexed,
        "indexing_seconds": round(index_seconds, 2),
        "schemawise": {
            "strict_table_recall": mean("strict_table"),
            "table_recall": mean("table_recall"),
            "strict_column_recall": mean("strict_column"),
            "column_recall": mean("column_recall"),
            "tables_kept_mean": mean("tables_kept"),
            "table_share_mean": mean("table_share"),
            "columns_kept_mean": mean("columns_kept"),
            "column_share_mean": mean("column_share"),
            "tokens_mean": mean("tokens"),
            "tokens_p95": float(np.percentile([r["tokens"] for r in rows], 95)) if rows else 0.0,
            "right_database": mean("right_database"),
            "latency_seconds": percentiles(latencies),
        },
    }
    if baselines:
        report["baselines_strict_table_recall"] = {
            mode: {str(k): round(float(np.mean(v)), 4) for k, v in by_k.items()}
            for mode, by_k in baseline_hits.items()
        }
    return report
