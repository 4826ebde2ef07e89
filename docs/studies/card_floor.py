"""Study: the relevance floor's card reading, replayed on the items of the eleven linking runs
(docs/benchmarks.md, "Questions that read as no table").

For every pack of a run made before the card reading (`bench linking --items FILE`, the
commands of "Figures at the defaults (2026-12-07)"), reads the question (with its evidence on
BIRD) as a sentence, by the word reader, against the table cards of its database
(card_reading.card_text): for a benchmark question, the pack's own tables (fewer than the floor
reads: a harder test); for an off-topic one, every table of the chosen database (more: an
easier one). Then counts, per half and bar, the benchmark questions that held their tables and
would be emptied, and the off-topic questions kept that would be emptied, by "nearness under
the bar" alone and with "and no word names the schema" (the rule kept).

.venv/bin/python docs/studies/card_floor.py ITEMS_DIR
(ITEMS_DIR holds spider.jsonl, spiderU.jsonl, bird.jsonl, … as scratch runs name them.)
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import numpy as np

from schemawise.graph.model import Column, SchemaGraph, Table
from schemawise.index.onnx_minilm import OnnxMiniLMEmbedder
from schemawise.retrieve.card_reading import card_text

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT.parent / "shared" / "bench"
DATABASES = {
    "spider": [BENCH / "spider/database", ROOT / ".cache/warehouses/database",
               ROOT / ".cache/heldout/database"],
    "bird": [BENCH / "bird/dev/dev_databases"],
}  # fmt: skip
RUNS = ["spider", "spiderU", "bird", "birdU", "wh", "whU", "syn", "synU", "ho", "hoU"]
BARS = (0.15, 0.18, 0.2, 0.22, 0.25)


def graph_of(source: str) -> SchemaGraph:
    kind, name = source.split("/", 1)
    path = next(d / name / f"{name}.sqlite" for d in DATABASES[kind]
                if (d / name / f"{name}.sqlite").exists())  # fmt: skip
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    names = [n for (n,) in connection.execute(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
        "AND name NOT LIKE 'sqlite_%'")]  # fmt: skip
    return SchemaGraph(tables=[
        Table(name=n, columns=[Column(name=c[1], type=c[2] or "")
                               for c in connection.execute(f'PRAGMA table_info("{n}")')])
        for n in names
    ])  # fmt: skip


def nearness(items: Path) -> dict[str, list[dict[str, Any]]]:
    reader = OnnxMiniLMEmbedder()
    evidence = {(d["db_id"], d["question"]): d.get("evidence", "")
                for d in json.loads((BENCH / "bird/dev/dev.json").read_text())}  # fmt: skip
    graphs: dict[str, SchemaGraph] = {}
    cards: dict[tuple[str, str], np.ndarray] = {}

    def unit(texts: list[str]) -> np.ndarray:
        vectors = np.asarray(reader.embed(texts), dtype=float)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    def card(source: str, table: str) -> np.ndarray:
        graph = graphs.setdefault(source, graph_of(source))
        index = {t.name.lower(): i for i, t in enumerate(graph.tables)}[table.lower()]
        if (source, table) not in cards:
            cards[source, table] = unit([card_text(graph, index)])[0]
        return cards[source, table]

    out: dict[str, list[dict[str, Any]]] = {}
    for run in RUNS:
        rows = [json.loads(line) for line in (items / f"{run}.jsonl").read_text().splitlines()]
        rows = [r for r in rows if not r["empty"]]
        texts = [f"{r['question']} {evidence.get((r['database'], r['question']), '')}".strip()
                 if run.startswith("bird") and r["set"] == "benchmark" else r["question"]
                 for r in rows]  # fmt: skip
        for row, asked in zip(rows, unit(texts), strict=True):
            source = row["source"]
            tables = (
                row["tables"]
                if row["set"] == "benchmark"
                else [t.name for t in graphs.setdefault(source, graph_of(source)).tables]
            )
            row["near"] = max(float(card(source, t) @ asked) for t in tables)  # fmt: skip
        out[run] = rows
    return out


def main(items: str) -> None:
    runs = nearness(Path(items))
    for half, parity in (("even", 0), ("odd", 1)):
        print(f"{half} half: benchmark questions holding their tables emptied | off-topic "
              "questions kept, emptied / kept")  # fmt: skip
        for bar in BARS:
            for named_too in (False, True):
                cells = []
                for run in RUNS:
                    rows = [r for r in runs[run] if r["number"] % 2 == parity]
                    hit = [r for r in rows if r["near"] < bar and
                           not (named_too and r["relevance"].get("named"))]  # fmt: skip
                    lost = sum(1 for r in hit if r["set"] == "benchmark" and r["strict_table"])
                    off = [r for r in rows if r["set"] != "benchmark"]
                    cells.append(f"{run} {lost}|{sum(r['set'] != 'benchmark' for r in hit)}"
                                 f"/{len(off)}")  # fmt: skip
                rule = "and names nothing" if named_too else "alone"
                print(f"  under {bar} {rule}: " + ", ".join(cells))


if __name__ == "__main__":
    main(sys.argv[1])
