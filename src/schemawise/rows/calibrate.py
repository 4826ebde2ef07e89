"""`rows calibrate`: the distance threshold that maximises F1 on a labelled set, stored with
the table so that searches drop rows too far to be relevant — and can answer "nothing"."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from schemawise.errors import SchemawiseError
from schemawise.index.embed import get_embedder
from schemawise.rows.config import RowsConfig
from schemawise.rows.search import SearchSettings, search


@dataclass(frozen=True)
class Label:
    query: str
    tenant: Any
    relevant: frozenset[Any]
    kind: str = ""


def read_labels(path: Path) -> list[Label]:
    """JSONL: `{query, tenant | owner_id, relevant: [keys], kind?}` per line."""
    if not path.is_file():
        raise SchemawiseError(
            f"No labels file at {path}.", "Give a JSONL file of labelled queries."
        )
    labels = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            labels.append(
                Label(row["query"], row.get("tenant", row.get("owner_id")),
                      frozenset(row.get("relevant", [])), row.get("kind", ""))
            )  # fmt: skip
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise SchemawiseError(
                f"{path}:{number} is not a label ({exc}).",
                'Each line: {"query": "...", "tenant": 1, "relevant": [3, 5]}.',
            ) from exc
    return labels


@dataclass
class Candidates:
    """What a search returns with no threshold: hybrid order, each row's distance, and
    whether it matched the query's terms."""

    label: Label
    keys: list[Any]
    distances: list[float | None]
    lexical: list[bool]


def collect(
    conn: psycopg.Connection[Any], config: RowsConfig, labels: list[Label], k: int
) -> list[Candidates]:
    embedder = get_embedder(config.model)
    vectors = embedder.embed([label.query for label in labels])
    out = []
    for label, vector in zip(labels, vectors, strict=True):
        result = search(
            conn, config, label.query, tenant=label.tenant, vector=vector,
            settings=SearchSettings(k=k, use_threshold=False),
        )  # fmt: skip
        out.append(
            Candidates(
                label,
                [r["key"] for r in result.rows],
                [r["distance"] for r in result.rows],
                [r["lexical_rank"] is not None for r in result.rows],
            )
        )
    return out


def f1_at(
    candidates: Candidates, threshold: float | None, k: int, gate: float | None = None
) -> float:
    """F1 of the top-k rows a search with these thresholds returns. A query with nothing
    relevant scores 1 when it returns nothing, 0 otherwise."""
    nearest = min((d for d in candidates.distances if d is not None), default=math.inf)
    closed = gate is not None and nearest > gate and not any(candidates.lexical)
    kept = (
        []
        if closed
        else [
            key
            for key, distance, lexical in zip(
                candidates.keys, candidates.distances, candidates.lexical, strict=True
            )
            if threshold is None or lexical or (distance is not None and distance <= threshold)
        ][:k]
    )
    relevant = candidates.label.relevant
    if not relevant:
        return 1.0 if not kept else 0.0
    if not kept:
        return 0.0
    hits = sum(1 for key in kept if key in relevant)
    precision = hits / len(kept)
    recall = hits / min(len(relevant), k)
    return 0.0 if hits == 0 else 2 * precision * recall / (precision + recall)


def best_threshold(candidates: list[Candidates], k: int) -> tuple[float, float, float]:
    """(row threshold, gate, mean F1): both swept over the quantiles of observed distances."""
    distances = sorted({d for c in candidates for d in c.distances if d is not None})
    if not distances:
        raise SchemawiseError("No distances to calibrate on.", "Embed the table's rows first.")
    grid = [float(x) for x in np.quantile(np.array(distances), np.linspace(0.0, 1.0, 41))]
    best = (grid[-1], grid[-1], -1.0)
    for gate in grid:
        for threshold in grid:
            if threshold < gate:
                continue  # a row threshold below the gate would make the gate pointless
            score = float(np.mean([f1_at(c, threshold, k, gate) for c in candidates]))
            if score > best[2]:
                best = (threshold, gate, score)
    return best


def calibrate(
    conn: psycopg.Connection[Any], config: RowsConfig, labels: list[Label], k: int = 20
) -> dict[str, Any]:
    if not labels:
        raise SchemawiseError(
            "The labels file is empty.", "Label a few queries, with and without relevant rows."
        )
    candidates = collect(conn, config, labels, k)
    threshold, gate, f1 = best_threshold(candidates, k)
    baseline = float(np.mean([f1_at(c, None, k) for c in candidates]))
    summary = {
        "labels": len(labels),
        "k": k,
        "f1": round(f1, 4),
        "f1_without_threshold": round(baseline, 4),
    }
    conn.execute(
        "UPDATE schemawise.rows_config SET threshold = %s, gate_threshold = %s, "
        "calibrated_at = now(), calibration = %s WHERE table_name = %s",
        (threshold, gate, json.dumps(summary), config.table),
    )
    conn.commit()
    return {
        "table": config.table,
        "threshold": round(threshold, 4),
        "gate": round(gate, 4),
        **summary,
    }
