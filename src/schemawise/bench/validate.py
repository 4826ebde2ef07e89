"""`bench validate`: false alarms on gold SQL, and detection of mutated gold SQL."""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from schemawise.bench import check_speed, gold_errors
from schemawise.bench.mutations import EXPECTED, OPERATORS, Skipped
from schemawise.bench.timing import percentiles
from schemawise.db.sqlite import SQLiteSource
from schemawise.eval.datasets import Dataset, Example, database_path, load_examples
from schemawise.graph.extract import ExtractOptions, extract_graph
from schemawise.graph.model import SchemaGraph
from schemawise.validate.check import CheckResult, check_sql

MISSED_EXAMPLES = 5


def graphs(dataset: Dataset, data: Path, db_ids: set[str]) -> dict[str, SchemaGraph]:
    out = {}
    for db_id in sorted(db_ids):
        with SQLiteSource(str(database_path(dataset, data, db_id))) as source:
            out[db_id] = extract_graph(source, ExtractOptions())
    return out


@dataclass
class Detection:
    """Per operator: mutants made, mutants caught, gold queries skipped (by reason)."""

    applied: Counter[str] = field(default_factory=Counter)
    caught: Counter[str] = field(default_factory=Counter)
    skipped: dict[str, Counter[str]] = field(default_factory=dict)
    missed: dict[str, list[str]] = field(default_factory=dict)

    def mutate(self, tree: exp.Expression, graph: SchemaGraph, rng: random.Random) -> None:
        for name, operator in OPERATORS.items():
            mutated = operator(tree, graph, rng)
            if mutated is None:
                continue
            if isinstance(mutated, Skipped):
                self.skipped.setdefault(name, Counter())[mutated.reason] += 1
                continue
            self.applied[name] += 1
            outcome = check_sql(mutated, graph)
            found = {p.type for p in outcome.errors} | {p.type for p in outcome.fanout}
            if EXPECTED[name] in found:
                self.caught[name] += 1
            elif len(misses := self.missed.setdefault(name, [])) < MISSED_EXAMPLES:
                misses.append(mutated)

    def report(self) -> dict[str, dict[str, Any]]:
        return {
            name: {
                "mutated": self.applied[name],
                "caught": self.caught[name],
                "share": (
                    round(self.caught[name] / self.applied[name], 4) if self.applied[name] else None
                ),
                "skipped": dict(self.skipped.get(name, Counter())),
                "missed_examples": self.missed.get(name, []),
            }
            for name in OPERATORS
        }


def flagged_case(
    dataset: Dataset, number: int, example: Example, result: CheckResult
) -> dict[str, Any]:
    """One gold query `check` refuses, classified against the reviewed list of gold errors."""
    entry = gold_errors.find(
        dataset, example.db_id, number, example.sql, {p.type for p in result.errors}
    )
    case: dict[str, Any] = {
        "db_id": example.db_id,
        "question": number,
        "sql": example.sql,
        "problems": [{"type": p.type, "message": p.message} for p in result.errors],
        "classification": "gold_error" if entry else "false_alarm",
    }
    if entry:
        case["reason"] = entry.reason
    return case


def _summary(cases: list[dict[str, Any]]) -> dict[str, Any]:
    types: Counter[str] = Counter(p["type"] for c in cases for p in c["problems"])
    return {"queries": len(cases), "by_type": dict(types), "cases": cases}


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
    by_db = graphs(dataset, data, {e.db_id for e in examples})
    rng = random.Random(seed)
    flagged: list[dict[str, Any]] = []
    fanout_reports = 0
    latencies: list[float] = []
    detection = Detection()
    for number, example in enumerate(examples):
        if number % 100 == 0:
            say(f"{number}/{len(examples)}")
        graph = by_db[example.db_id]
        started = time.perf_counter()
        result = check_sql(example.sql, graph)
        latencies.append(time.perf_counter() - started)
        if result.fanout:
            fanout_reports += 1
        if result.errors:
            flagged.append(flagged_case(dataset, number, example, result))
            continue  # mutations start from queries the validator accepts
        try:
            tree = sqlglot.parse_one(example.sql, read="sqlite")
        except SqlglotError:
            continue
        if isinstance(tree, exp.Expression):
            detection.mutate(tree, graph, rng)
    checked = len(examples)
    alarms = [c for c in flagged if c["classification"] == "false_alarm"]
    gold = [c for c in flagged if c["classification"] == "gold_error"]
    # Gold queries that are themselves wrong have no right answer to alarm falsely on.
    scored = checked - len(gold)
    false_alarms = _summary(alarms)
    return {
        "benchmark": "validate",
        "dataset": dataset,
        "data": str(data),
        "queries": checked,
        "databases": len(by_db),
        "flagged_gold": {
            "queries": len(flagged),
            "by_type": dict(Counter(p["type"] for c in flagged for p in c["problems"])),
        },
        "false_alarms": {
            "queries_with_errors": false_alarms["queries"],
            "scored_queries": scored,
            "share": round(len(alarms) / scored, 4) if scored else 0.0,
            "by_type": false_alarms["by_type"],
            "cases": alarms,
        },
        "gold_errors": _summary(gold),
        "fanout_reported": {
            "queries": fanout_reports,
            "share": round(fanout_reports / checked, 4) if checked else 0.0,
        },
        "detection": detection.report(),
        "check_latency_seconds": percentiles(latencies),
        "check_speed_on_2000_table_catalog": check_speed.run(2000),
    }
