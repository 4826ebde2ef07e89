"""The comparison table of docs/benchmarks.md from `eval --json` reports:
`python -m schemawise.eval.table LABEL=FILE …` prints one Markdown row per report."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def row(label: str, report: dict[str, Any]) -> str:
    items = report.get("items") or []
    n = len(items) or 1
    metrics = report["metrics"]
    prompt_tokens = report["cost"].get("prompt_tokens", 0)
    calls = report["cost"].get("model_calls", 0)
    # The model's own seconds, kept with each prediction: right also for a resumed run.
    seconds = sum(sum((i["stages"].get("seconds") or {}).values()) for i in items) / n
    fixed = sum(1 for i in items if i["stages"].get("fixed"))
    cells = [
        label,
        f"{metrics['execution_accuracy']:.3f}"
        if metrics["execution_accuracy"] is not None
        else "–",
        f"{metrics['executes_rate']:.3f}",
        f"{prompt_tokens / max(calls, 1):,.0f}",
        f"{seconds:.1f}",
        str(metrics.get("strict_table_recall")),
        str(metrics.get("right_database") or "–"),
        str(fixed),
    ]
    return "| " + " | ".join(cells) + " |"


HEADER = (
    "| prompt | EX | valid SQL (executes) | mean prompt tokens per call | s/question "
    "| strict table recall | right database | questions a fix touched |\n"
    "|---|---|---|---|---|---|---|---|"
)


def main(args: list[str]) -> None:
    print(HEADER)
    for arg in args:
        label, _, path = arg.partition("=")
        print(row(label, json.loads(Path(path).read_text())))


if __name__ == "__main__":
    main(sys.argv[1:])
