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
    with target.open("a", encoding="utf-8") as handle:
        handle.write(line)


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
