"""Study: does the word reader (all-MiniLM-L6-v2, int8) tell which kept columns a query needs?
(docs/benchmarks.md, "Column pruning against the keys-and-gold floor").

Reads the items of a BIRD run with the database given (`bench linking --items FILE`), reads
the question and its evidence against each kept column written as a card (`frpm: county name`,
the table's words and the column's, or the column's words alone), and replays rules that drop
the columns kept as "retrieved" (keys and columns kept for another reason stay): those under
the table's nearest column less a margin, those under the question's nearest less a margin,
and all but the k nearest of each table. Prints strict column recall, mean column share and
that share against the keys-and-gold floor, for the even and the odd half.

.venv/bin/schemawise bench linking --dataset bird --data ../shared/bench/bird/dev \
    --no-baselines --json --items bird.jsonl > bird.json
.venv/bin/python docs/studies/column_cards.py bird.jsonl ../shared/bench/bird/dev
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from schemawise.graph.naming import split_identifier
from schemawise.index.onnx_minilm import OnnxMiniLMEmbedder

Column = dict[str, Any]
Rule = Callable[[list[Column]], list[Column]]


def words(name: str) -> str:
    return " ".join(split_identifier(name))


def load(items: Path, dev: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in items.read_text().splitlines()]
    evidence = {(d["db_id"], d["question"]): d.get("evidence", "") for d in
                json.loads((dev / "dev.json").read_text())}  # fmt: skip
    out = [r for r in rows if r["set"] == "benchmark"]
    for row in out:
        row["text"] = f"{row['question']} {evidence.get((row['database'], row['question']), '')}"
    return out


def read(rows: list[dict[str, Any]], with_table: bool) -> None:
    """Each kept column's similarity to its question, as `sim`, in `row["kept"]`."""
    reader = OnnxMiniLMEmbedder()

    def unit(texts: list[str]) -> dict[str, np.ndarray]:
        unique = sorted(set(texts))
        vectors = np.asarray(reader.embed(unique), dtype=float)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        return dict(zip(unique, vectors, strict=True))

    def card(table: str, column: str) -> str:
        return f"{words(table)}: {words(column)}" if with_table else words(column)

    kept = [r for r in rows if not r["empty"] and r.get("columns")]
    questions = unit([r["text"] for r in kept])
    cards = unit([card(t, c) for r in kept for t, c, _, _ in r["columns"]["kept"]])
    for row in kept:
        keys = {tuple(k) for k in row["columns"]["keys"]}
        row["kept"] = [
            {"table": t, "key": (t.lower(), c.lower()), "why": why,
             "fixed": why == "key" or (t.lower(), c.lower()) in keys or why != "retrieved",
             "sim": float(cards[card(t, c)] @ questions[row["text"]])}
            for t, c, _, why in row["columns"]["kept"]
        ]  # fmt: skip


def score(rows: list[dict[str, Any]], rule: Rule) -> tuple[float, float, float]:
    strict = share = floor = 0.0
    for row in rows:
        if row["empty"] or not row.get("columns"):
            continue
        columns = row["columns"]
        gold = {tuple(g) for g in columns["gold"]}
        kept = rule(row["kept"])
        strict += gold <= {c["key"] for c in kept}
        share += len(kept) / columns["database_columns"]
        floor += len({tuple(k) for k in columns["keys"]} | gold) / columns["database_columns"]
    return strict / len(rows), share / len(rows), share / floor


def under_table_best(margin: float) -> Rule:
    def rule(columns: list[Column]) -> list[Column]:
        best: dict[str, float] = {}
        for c in columns:
            if not c["fixed"]:
                best[c["table"]] = max(best.get(c["table"], -1.0), c["sim"])
        return [c for c in columns if c["fixed"] or c["sim"] >= best[c["table"]] - margin]

    return rule


def under_question_best(margin: float) -> Rule:
    def rule(columns: list[Column]) -> list[Column]:
        best = max((c["sim"] for c in columns if not c["fixed"]), default=0.0)
        return [c for c in columns if c["fixed"] or c["sim"] >= best - margin]

    return rule


def nearest_per_table(k: int) -> Rule:
    def rule(columns: list[Column]) -> list[Column]:
        kept, count = [], dict[str, int]()
        for c in sorted(columns, key=lambda c: -c["sim"]):
            count[c["table"]] = count.get(c["table"], 0) + (not c["fixed"])
            if c["fixed"] or count[c["table"]] <= k:
                kept.append(c)
        return kept

    return rule


def main(items: str, dev: str) -> None:
    rows = load(Path(items), Path(dev))
    halves = {h: [r for r in rows if r["number"] % 2 == n] for n, h in enumerate(("even", "odd"))}
    rules: dict[str, Rule] = {"as built": lambda columns: columns}
    rules |= {f"under the table's nearest - {m}": under_table_best(m) for m in (0.1, 0.2, 0.3)}
    rules |= {f"under the question's nearest - {m}": under_question_best(m) for m in (0.3, 0.4)}
    rules |= {f"the {k} nearest per table": nearest_per_table(k) for k in (3, 4, 5)}
    for with_table in (True, False):
        read(rows, with_table)
        print("cards:", "table: column" if with_table else "column words")
        for name, rule in rules.items():
            cells = [f"{h} %.3f at %.3f (%.2fx)" % score(r, rule) for h, r in halves.items()]
            print(f"  {name}: " + "; ".join(cells))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
