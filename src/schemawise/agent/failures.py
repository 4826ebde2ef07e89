"""The failure log: every failed or fixed generation, one JSON line each, in the form the
evaluation harness reads as a golden set (question, the SQL that failed, the error class,
the fix, the pack's tables) so failures become test cases with one command."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any


def default_path() -> Path:
    from schemawise.config import home_dir

    return home_dir() / "failures.jsonl"


def record(entry: dict[str, Any], path: Path | None = None) -> None:
    """Append one line; a line is written whole or not at all (one write call, O_APPEND)."""
    line = json.dumps({"at": time.time(), **entry}, default=str) + "\n"
    target = path or default_path()
    with target.open("a+b") as handle:
        # A line torn by a crash must not swallow this one: start on a line of its own.
        if handle.seek(0, 2) > 0:
            handle.seek(-1, 2)
            if handle.read(1) != b"\n":
                line = "\n" + line
        handle.write(line.encode("utf-8"))


def entries(path: Path | None = None) -> list[dict[str, Any]]:
    target = path or default_path()
    if not target.is_file():
        return []
    found = []
    for line in target.read_text(encoding="utf-8").splitlines():
        try:
            found.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a torn last line after a crash is skipped, not fatal
    return found


def to_golden(logged: list[dict[str, Any]], urls: dict[str, str]) -> str:
    """A golden set (YAML, eval/golden.py) from the log, for review. A fixed generation's
    final SQL is its gold candidate; a failed one gets `gold: []`, so the file does not load
    until someone writes its correct SQL — which is the point of the review. `urls` maps a
    source to its database (the index's `sources`)."""
    import yaml

    blocks = ["# From the assistant's failure log: check every gold before trusting a score.",
              "items:"]  # fmt: skip
    for number, entry in enumerate(logged, start=1):
        fixed = entry.get("outcome") == "fixed" and bool(entry.get("sql"))
        classes = ", ".join(entry.get("error_classes", [])) or "no error class"
        note = f"fixed after {classes}: review this gold" if fixed else (
            f"failed ({classes}): write the correct SQL as gold")  # fmt: skip
        item = {
            "id": f"failure-{number}",
            "question": entry.get("question", ""),
            "database": urls.get(str(entry.get("source")), entry.get("source")),
            "gold": [entry["sql"]] if fixed else [],
            "tables": entry.get("pack_tables", []),
        }
        text = yaml.safe_dump([item], sort_keys=False, allow_unicode=True, width=100)
        blocks.append(f"  # {note}")
        blocks.extend("  " + line for line in text.splitlines())
    return "\n".join(blocks) + "\n"
