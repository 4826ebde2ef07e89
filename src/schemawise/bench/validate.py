"""`bench validate`: false alarms on gold SQL, and detection of mutated gold SQL."""

from __future__ import annotations

import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from schemawise.bench import check_speed
from schemawise.bench.mutations import EXPECTED, OPERATORS
from schemawise.bench.timing import percentiles
from schemawise.db.sqlite import SQLiteSource
from schemawise.eval.datasets import Dataset, database_path, load_examples
from schemawise.graph.extract import ExtractOptions, extract_graph
from schemawise.graph.model import SchemaGraph
from schemawise.validate.check import check_sql


def _graphs(dataset: Dataset, data: Path, db_ids: set[str]) -> dict[str, SchemaGraph]:
    graphs = {}
    for db_id in sorted(db_ids):
        with SQLiteSource(str(database_path(dataset, data, db_id))) as source:
            graphs[db_id] = extract_graph(source, ExtractOptions())
    return graphs


def run(
    dataset: Dataset,
    data: Path,
    *,
    seed: int = 7,
    limit: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    say = progress or (lambda _: None)
    examples = load_examples(dataset, data)[:limit]
    say("extracting graphs")
    graphs = _graphs(dataset, data, {e.db_id for e in examples})
    rng = random.Random(seed)
    error_types: Counter[str] = Counter()
    false_alarms: list[dict[str, Any]] = []
    fanout_reports = 0
    latencies: list[float] = []
    applied: Counter[str] = Counter()
    caught: Counter[str] = Counter()
    missed: dict[str, list[str]] = defaultdict(list)
    for number, example in enumerate(examples):
        if number % 100 == 0:
            say(f"{number}/{len(examples)}")
        graph = graphs[example.db_id]
        started = time.perf_counter()
        result = check_sql(example.sql, graph)
        latencies.append(time.perf_counter() - started)
        if result.fanout:
            fanout_reports += 1
        if result.errors:
            error_types.update(p.type for p in result.errors)
            false_alarms.append(
                {
                    "db_id": example.db_id,
                    "sql": example.sql,
                    "errors": [f"{p.type}: {p.message}" for p in result.errors],
                }
            )
            continue  # mutations start from queries the validator accepts
        try:
            tree = sqlglot.parse_one(example.sql, read="sqlite")
        except SqlglotError:
            continue
        if not isinstance(tree, exp.Expression):
            continue
        for name, operator in OPERATORS.items():
            mutated = operator(tree, graph, rng)
            if mutated is None:
                continue
            applied[name] += 1
            outcome = check_sql(mutated, graph)
            found = {p.type for p in outcome.errors} | {p.type for p in outcome.fanout}
            if EXPECTED[name] in found:
                caught[name] += 1
            elif len(missed[name]) < 5:
                missed[name].append(mutated)
    checked = len(examples)
    return {
        "benchmark": "validate",
        "dataset": dataset,
        "data": str(data),
        "queries": checked,
        "databases": len(graphs),
        "false_alarms": {
            "queries_with_errors": len(false_alarms),
            "share": round(len(false_alarms) / checked, 4) if checked else 0.0,
            "by_type": dict(error_types),
            "examples": false_alarms[:20],
        },
        "fanout_reported": {
            "queries": fanout_reports,
            "share": round(fanout_reports / checked, 4) if checked else 0.0,
        },
        "detection": {
            name: {
                "mutated": applied[name],
                "caught": caught[name],
                "share": round(caught[name] / applied[name], 4) if applied[name] else None,
                "missed_examples": missed[name],
            }
            for name in OPERATORS
        },
        "check_latency_seconds": percentiles(latencies),
        "check_speed_on_2000_table_catalog": check_speed.run(2000),
    }
