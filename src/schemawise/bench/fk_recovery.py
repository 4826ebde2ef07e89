"""FK recovery: strip the declared foreign keys from SQLite databases and infer them back."""

from __future__ import annotations

import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from schemawise.db.base import Source
from schemawise.db.sqlite import SQLiteSource
from schemawise.errors import BenchmarkDataError
from schemawise.graph.datachecks import DataChecker
from schemawise.graph.extract import ExtractOptions, extract_graph
from schemawise.graph.model import Edge


def find_databases(folder: Path) -> list[Path]:
    """Spider's layout (`<db>/<db>.sqlite`) or a flat folder of .sqlite files."""
    if folder.is_file():
        return [folder]
    found = sorted(
        p for p in folder.rglob("*") if p.suffix.lower() in {".sqlite", ".sqlite3", ".db"}
    )
    if not found:
        raise BenchmarkDataError(
            f"No SQLite databases under {folder}.",
            "Give a folder such as ../shared/bench/spider/database.",
        )
    return found


# The split used to develop the inference rules without fitting them: databases in sorted
# name order, even positions (0, 2, …) to tune on, odd positions held out to check.
HALVES = ("even", "odd")


def split_half(databases: list[Path], half: str | None) -> list[Path]:
    """The tuning (`even`) or held-out (`odd`) half of databases sorted by name; all if None."""
    if half is None:
        return databases
    if half not in HALVES:
        raise BenchmarkDataError(f"No half {half!r}.", "Give --half even or --half odd.")
    ordered = sorted(databases, key=lambda p: p.stem)
    start = HALVES.index(half)
    return ordered[start::2]


def copy_without_foreign_keys(original: Path, target: Path, keep_keys: bool = True) -> None:
    """Recreate every table with its columns, types and (optionally) keys, but no foreign
    key, and copy its rows."""
    src = sqlite3.connect(f"file:{original}?mode=ro", uri=True)
    dst = sqlite3.connect(target)
    try:
        tables = [
            r[0]
            for r in src.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        for table in tables:
            info = src.execute(f'PRAGMA table_info("{table}")').fetchall()
            columns = [f'"{c[1]}" {c[2] or ""}'.strip() for c in info]
            pk = [c[1] for c in sorted(info, key=lambda c: c[5]) if c[5]]
            if keep_keys and pk:
                columns.append("PRIMARY KEY (" + ", ".join(f'"{c}"' for c in pk) + ")")
            dst.execute(f'CREATE TABLE "{table}" ({", ".join(columns)})')
            if keep_keys:
                indexes = src.execute(f'PRAGMA index_list("{table}")').fetchall()
                for number, index in enumerate(indexes):
                    if index[2] and index[3] != "pk":
                        cols = [r[2] for r in src.execute(f'PRAGMA index_info("{index[1]}")')]
                        quoted = ", ".join(f'"{c}"' for c in cols)
                        name = f"uq_{number}_{table}"
                        dst.execute(f'CREATE UNIQUE INDEX "{name}" ON "{table}" ({quoted})')
            marks = ", ".join("?" for _ in info)
            rows = src.execute(f'SELECT * FROM "{table}"')
            dst.executemany(f'INSERT INTO "{table}" VALUES ({marks})', rows)
        dst.commit()
    finally:
        src.close()
        dst.close()


def _pairs(edges: list[Edge]) -> set[tuple[str, str, str, str]]:
    """Column pairs of single-column edges, lower-cased, direction kept (child → parent)."""
    out = set()
    for e in edges:
        for c, p in zip(e.child_columns, e.parent_columns, strict=True):
            out.add((e.child_table.lower(), c.lower(), e.parent_table.lower(), p.lower()))
    return out


def _contradicted(source: Source, declared: list[Edge]) -> list[str]:
    checker = DataChecker(source)
    found = []
    for edge in declared:
        reasons = []
        if edge.evidence.parent_unique is False:
            reasons.append("parent key not unique")
        measured = checker.inclusion(
            edge.child_table,
            edge.child_columns,
            edge.parent_table,
            edge.parent_columns,
            same_types=False,
        )
        if measured is not None and measured[0] < 1.0:
            reasons.append(f"{1 - measured[0]:.0%} of child values have no parent")
        if reasons:
            found.append(f"{edge.describe()}: {'; '.join(reasons)}")
    return found


def _holds_on_data(edge: Edge) -> bool:
    inclusion = edge.evidence.inclusion
    return inclusion is not None and inclusion >= 0.95 and edge.evidence.parent_unique is True


def _scores(tp: int, fp: int, fn: int) -> dict[str, float]:
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4)}


def run(
    folder: Path,
    *,
    data_checks: bool = True,
    keep_keys: bool = True,
    half: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    databases = split_half(find_databases(folder), half)
    per_db: list[dict[str, Any]] = []
    tp = fp = fn = contradicted = fp_holding = 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for path in databases:
            if progress:
                progress(path.stem)
            with SQLiteSource(str(path)) as original:
                gold_graph = extract_graph(original, ExtractOptions(infer=False))
                declared = [e for e in gold_graph.edges if e.source == "foreign_key" and not e.via]
                contradictions = _contradicted(original, declared) if data_checks else []
            contradicted += len(contradictions)
            gold = _pairs(declared)
            stripped = Path(tmp) / path.name
            copy_without_foreign_keys(path, stripped, keep_keys=keep_keys)
            with SQLiteSource(str(stripped)) as source:
                graph = extract_graph(source, ExtractOptions(data_checks=data_checks))
            found = [e for e in graph.edges if e.via is None and e.source != "foreign_key"]
            inferred = _pairs(found)
            # A join found in the reverse direction is still the right join, but counts as wrong.
            hits, extra, missed = gold & inferred, inferred - gold, gold - inferred
            tp, fp, fn = tp + len(hits), fp + len(extra), fn + len(missed)
            holding = _pairs([e for e in found if _holds_on_data(e)]) & extra
            fp_holding += len(holding)
            per_db.append(
                {
                    "database": path.stem,
                    "declared": len(gold),
                    "inferred": len(inferred),
                    **_scores(len(hits), len(extra), len(missed)),
                    "false_positives": sorted(f"{c}.{cc} -> {p}.{pc}" for c, cc, p, pc in extra),
                    "false_positives_holding_on_data": sorted(
                        f"{c}.{cc} -> {p}.{pc}" for c, cc, p, pc in holding
                    ),
                    "missed": sorted(f"{c}.{cc} -> {p}.{pc}" for c, cc, p, pc in missed),
                    "declared_contradicted_by_data": contradictions,
                }
            )
    return {
        "benchmark": "fk-recovery",
        "data": str(folder),
        "databases": len(databases),
        "data_checks": data_checks,
        "keys_kept": keep_keys,
        "declared_edges": tp + fn,
        "inferred_edges": tp + fp,
        "pooled": _scores(tp, fp, fn),
        "true_positives": tp,
        "false_positives": fp,
        "false_negatives": fn,
        # Of the false positives, the pairs of joins the data upholds all the same (95% or more
        # of the child's values in a parent that is unique on the data): joins the declared
        # keys leave out, or the data's coincidences; a reader's judgement, not a score.
        "false_positives_holding_on_data": fp_holding,
        # Declared foreign keys the data disagrees with: a non-unique parent key, or child
        # values missing from the parent (orphans).
        "declared_contradicted_by_data": contradicted,
        "seconds": round(time.perf_counter() - started, 3),
        "per_database": per_db,
    }
