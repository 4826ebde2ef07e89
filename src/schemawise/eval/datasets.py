"""Loaders for the benchmark layouts in ../shared/bench (Spider dev, BIRD dev)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from schemawise.errors import BenchmarkDataError

Dataset = Literal["spider", "bird"]


@dataclass(frozen=True)
class Example:
    db_id: str
    question: str
    sql: str
    evidence: str = ""


def _read_json(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        raise BenchmarkDataError(
            f"{path} not found.", "Give --data the dataset folder, e.g. ../shared/bench/spider."
        )
    data = json.loads(path.read_text())
    if not isinstance(data, list):
        raise BenchmarkDataError(f"{path} is not a list of examples.", "Check the layout.")
    return data


def load_examples(dataset: Dataset, data: Path) -> list[Example]:
    if dataset == "spider":
        rows = _read_json(data / "dev.json")
        return [Example(r["db_id"], r["question"], r["query"]) for r in rows]
    rows = _read_json(data / "dev.json")
    return [
        Example(r["db_id"], r["question"], r.get("SQL") or r.get("sql", ""), r.get("evidence", ""))
        for r in rows
    ]


def database_path(dataset: Dataset, data: Path, db_id: str) -> Path:
    folder = data / ("database" if dataset == "spider" else "dev_databases") / db_id
    path = folder / f"{db_id}.sqlite"
    if not path.is_file():
        raise BenchmarkDataError(f"No database file {path}.", "Check --data and the layout.")
    return path
