"""Indexing throughput and `context` latency on a synthetic 2,000-table catalog."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import psycopg

from schemawise.bench.check_speed import synthetic_graph
from schemawise.bench.extract_scale import NOUNS
from schemawise.bench.scratch import scratch_database
from schemawise.bench.timing import percentiles
from schemawise.index import store
from schemawise.index.cards import documents
from schemawise.index.embed import get_embedder
from schemawise.retrieve.context import build_context


def run(
    tables: int = 2000, questions: int = 100, progress: Callable[[str], None] | None = None
) -> dict[str, Any]:
    say = progress or (lambda _: None)
    graph = synthetic_graph(tables)
    source = f"synthetic/{tables}"
    embedder = get_embedder()
    with scratch_database("context_speed") as url, psycopg.connect(url) as conn:
        store.ensure_schema(conn, embedder.dim)
        say(f"indexing {tables} tables")
        started = time.perf_counter()
        docs = documents(source, graph)
        counts = store.replace_source(conn, source, docs, embedder)
        index_seconds = time.perf_counter() - started
        rng = random.Random(3)
        asked = [
            f"total attr 5 of {rng.choice(NOUNS)} {rng.randrange(tables // len(NOUNS))} "
            f"per {rng.choice(NOUNS)}"
            for _ in range(questions)
        ]
        build_context(conn, asked[0], {source: graph}, embedder, sources=[source])  # warm
        say("context latency")
        latencies = []
        for question in asked:
            began = time.perf_counter()
            build_context(conn, question, {source: graph}, embedder, sources=[source])
            latencies.append(time.perf_counter() - began)
    return {
        "benchmark": "context-speed",
        "tables": tables,
        "columns": sum(len(t.columns) for t in graph.tables),
        "documents": len(docs),
        "embedded": counts.embedded,
        "indexing_seconds": round(index_seconds, 2),
        "tables_per_second": round(tables / index_seconds, 1) if index_seconds else None,
        "context_latency_seconds": percentiles(latencies),
    }
