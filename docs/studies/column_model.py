"""Study: can structural features tell which pruned columns a query needs? (docs/benchmarks.md,
"Column pruning against the keys-and-gold floor").

Runs `bench linking` on BIRD dev (database given) for the even and the odd half with column
choice traced, fits a logistic model on the even half's non-key kept columns (gold or not) over
19 features (the reason kept, the table's rank and relative score, the column's retrieval rank
and relative scores, name words shared with the question, type family, table width, tier),
and prints strict column recall and mean column share per drop threshold on both halves; then
the same with five features more that pair what kind of value the question gives with what
kind of column could hold it (a year or date and a time column, a capitalised name and a name
column, a quoted literal and a text column; whether the column is time- or name-like).

.venv/bin/python docs/studies/column_model.py ../shared/bench/bird/dev
"""

from __future__ import annotations

import json
import math
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

import schemawise.retrieve.context as context
from schemawise.bench import linking
from schemawise.graph.naming import type_family
from schemawise.retrieve.words import identifier_words

# What kind of value a question gives (a year or date; a capitalised name of two words or more
# not starting a sentence; a quoted literal) and the column words that hold such values.
YEAR_OR_DATE = re.compile(r"\b(1[89]\d\d|20\d\d)\b|\b\d{1,4}[/-]\d{1,2}([/-]\d{1,4})?\b")
PROPER_NAME = re.compile(r"(?<![.?!]\s)(?<!^)\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+")
QUOTED = re.compile(r"['\"][^'\"]{2,}['\"]")
TIME_WORDS = {"date", "year", "time", "day", "month", "dob", "birthday", "season"}
NAME_WORDS = {"name", "forename", "surname", "title", "firstname", "lastname"}
WHY = ["retrieved", "shares words", "names the rows", "time column", "written out", "holds a value"]
FAMILIES = ["text", "numeric", "temporal"]


def traced_run(data: Path, half: str) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """The half's questions with each pack's tables, column hits and picks, beside the gold."""
    traces: list[dict[str, Any]] = []
    tables_of: dict[str, Any] = {}
    choose_tables, choose_columns = context.choose_tables, context.choose_columns

    def spy_tables(*args: Any, **kwargs: Any) -> Any:
        chosen = choose_tables(*args, **kwargs)
        tables_of["last"] = {t.name: t.score for t in chosen.tables}
        return chosen

    def spy_columns(question: str, text: str, graph: Any, tables: list[str], paths: Any,
                    matched: Any, asked: set[str], meta: Any, settings: Any) -> Any:  # fmt: skip
        picks = choose_columns(question, text, graph, tables, paths, matched, asked, meta,
                               settings)  # fmt: skip
        traces.append({
            "question": question, "text": text, "tables": tables, "scores": tables_of["last"],
            "asked": asked,
            "matched": {t: sorted(matched.get(t, []), key=lambda h: -h[1]) for t in tables},
            "types": {t.name: {c.name: c.type for c in t.columns} for t in graph.tables},
            "picks": [(c.table, c.name, c.tier, c.reason) for c in picks],
        })  # fmt: skip
        return picks

    context.choose_tables, context.choose_columns = spy_tables, spy_columns  # type: ignore
    try:
        with tempfile.TemporaryDirectory() as tmp:
            items = Path(tmp) / "items.jsonl"
            result = linking.run("bird", data, baselines=False, items=items, half=half)  # type: ignore[arg-type]
            rows = [json.loads(line) for line in items.read_text().splitlines()]
    finally:
        context.choose_tables, context.choose_columns = choose_tables, choose_columns
    asked = [r for r in rows if r["set"] == "benchmark"]
    kept = [r for r in asked if not r["empty"]]
    for trace, row in zip(traces, kept, strict=False):  # off-topic questions come after
        trace["columns"] = row.get("columns")
    summary = result["schemawise"]
    totals = {
        "questions": len(asked),
        "recall": summary["strict_column_recall"],
        "share": summary["column_share_mean"],
        "floor": summary["keys_and_gold_share_mean"],
    }
    return [t for t in traces[: len(kept)] if t.get("columns")], totals


def features(traces: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rows, gold_flags, question, key_flags = [], [], [], []
    for number, trace in enumerate(traces):
        columns = trace["columns"]
        gold = {(t.lower(), c.lower()) for t, c in columns["gold"]}
        keys = {(t.lower(), c.lower()) for t, c in columns["keys"]}
        top_table = max(trace["scores"].values()) or 1.0
        top_column = max((h[0][1] for h in trace["matched"].values() if h), default=1.0) or 1.0
        for table, name, tier, why in trace["picks"]:
            hits = trace["matched"][table]
            names = [h[0] for h in hits]
            rank = names.index(name) if name in names else 99
            score = hits[rank][1] if rank < 99 else 0.0
            words = identifier_words(name)
            shared = len(words & trace["asked"])
            family = type_family(trace["types"][table].get(name, ""))
            rows.append([
                1.0, *[float(why.startswith(w)) for w in WHY],
                min(trace["tables"].index(table), 4), trace["scores"][table] / top_table,
                min(rank, 8), score / (hits[0][1] if hits else 1.0), score / top_column,
                shared, shared / max(1, len(words)), *[float(family == f) for f in FAMILIES],
                math.log(len(trace["types"][table])), float(tier == 2),
            ])  # fmt: skip
            gold_flags.append((table.lower(), name.lower()) in gold)
            question.append(number)
            key_flags.append((table.lower(), name.lower()) in keys)
    return np.array(rows), np.array(gold_flags, float), np.array(question), np.array(key_flags)


def value_kinds(traces: list[dict[str, Any]]) -> np.ndarray:
    """Per kept column: the question's kind of value paired with the column's kind."""
    rows = []
    for trace in traces:
        question = trace["question"]
        year = bool(YEAR_OR_DATE.search(question))
        name = bool(PROPER_NAME.search(question))
        quoted = bool(QUOTED.search(trace["text"]))
        for table, column, _, _ in trace["picks"]:
            words = identifier_words(column)
            family = type_family(trace["types"][table].get(column, ""))
            timely = family == "temporal" or bool(words & TIME_WORDS)
            naming = bool(words & NAME_WORDS)
            quoted_text = quoted and family == "text"
            rows.append(
                [float(year and timely), float(name and naming), float(quoted_text),
                 float(timely), float(naming)]
            )  # fmt: skip
    return np.array(rows)


def fit(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    weights = np.zeros(x.shape[1])
    for _ in range(3000):
        p = 1 / (1 + np.exp(-x @ weights))
        weights -= 0.5 * (x.T @ (p - y) / len(y) + 1e-3 * weights)
    return weights


def dropped(traces: list[dict[str, Any]], x: np.ndarray, y: np.ndarray, question: np.ndarray,
            keys: np.ndarray, weights: np.ndarray, bar: float,
            totals: dict[str, float]) -> tuple[float, float]:  # fmt: skip
    """Strict column recall and mean share with the non-key columns under `bar` dropped."""
    drop = ~keys & (1 / (1 + np.exp(-x @ weights)) < bar)
    lost = 0
    cut = 0.0
    for number, trace in enumerate(traces):
        columns = trace["columns"]
        gold = {(t.lower(), c.lower()) for t, c in columns["gold"]}
        kept = {(t.lower(), c.lower()) for t, c, _, _ in trace["picks"]}
        mine = question == number
        lost += gold <= kept and bool((drop & mine & (y == 1)).any())
        cut += (drop & mine).sum() / columns["database_columns"]
    n = totals["questions"]
    return totals["recall"] - lost / n, totals["share"] - cut / n


def main(data: str) -> None:
    tuned, held = traced_run(Path(data), "even"), traced_run(Path(data), "odd")
    x_even, y_even, q_even, k_even = features(tuned[0])
    x_odd, y_odd, q_odd, k_odd = features(held[0])
    print("as built: even", tuned[1], "odd", held[1])
    for label, extra in (("structural", False), ("with value kinds", True)):
        a = np.hstack([x_even, value_kinds(tuned[0])]) if extra else x_even.copy()
        b = np.hstack([x_odd, value_kinds(held[0])]) if extra else x_odd.copy()
        mean, spread = a[:, 1:].mean(0), a[:, 1:].std(0) + 1e-9
        for x in (a, b):
            x[:, 1:] = (x[:, 1:] - mean) / spread
        weights = fit(a[~k_even], y_even[~k_even])
        for bar in (0.005, 0.01, 0.02, 0.03, 0.05):
            for half, (traces, totals), x, y, q, k in (
                ("even", tuned, a, y_even, q_even, k_even),
                ("odd", held, b, y_odd, q_odd, k_odd),
            ):
                recall, share = dropped(traces, x, y, q, k, weights, bar, totals)
                print(f"{label}, bar {bar}: {half} strict column recall {recall:.4f}, mean share "
                      f"{share:.4f} ({share / totals['floor']:.2f}x the floor)")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1])
