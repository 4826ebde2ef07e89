"""The reviewed list of wrong gold queries: well-formed, and every entry still reproduces
(`check` on that gold query of that database reports exactly the stated problem)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
import yaml

from schemawise.bench import gold_errors
from schemawise.bench.validate import graphs
from schemawise.eval.datasets import Dataset, Example, load_examples
from schemawise.graph.model import SchemaGraph
from schemawise.validate.check import check_sql

FOLDERS: dict[Dataset, tuple[str, ...]] = {"spider": ("spider",), "bird": ("bird", "dev")}
ENTRIES = gold_errors.load()


@cache
def _examples(bench: Path, dataset: Dataset) -> list[Example]:
    return load_examples(dataset, bench.joinpath(*FOLDERS[dataset]))


@cache
def _graph(bench: Path, dataset: Dataset, db_id: str) -> SchemaGraph:
    return graphs(dataset, bench.joinpath(*FOLDERS[dataset]), {db_id})[db_id]


def test_the_reviewed_list_loads() -> None:
    assert ENTRIES
    for entry in ENTRIES:
        assert entry.reason.strip() and entry.problem.strip()


@pytest.mark.parametrize(
    "change",
    [{"reason": ""}, {"questions": []}, {"dataset": "wikisql"}, {"note": "an unknown key"}],
)
def test_a_malformed_entry_is_refused(tmp_path: Path, change: dict[str, object]) -> None:
    entry = {**ENTRIES[0].model_dump(mode="json"), **change}
    path = tmp_path / "gold_errors.yml"
    path.write_text(yaml.safe_dump([entry]))
    with pytest.raises(ValueError):
        gold_errors.load(path)


def test_a_question_listed_twice_is_refused(tmp_path: Path) -> None:
    entry = ENTRIES[0].model_dump(mode="json")
    path = tmp_path / "gold_errors.yml"
    path.write_text(yaml.safe_dump([entry, entry]))
    with pytest.raises(ValueError, match="listed twice"):
        gold_errors.load(path)


@pytest.mark.parametrize(
    ("entry", "question"),
    [(e, q) for e in ENTRIES for q in e.questions],
    ids=lambda v: v.db_id if isinstance(v, gold_errors.GoldError) else str(v),
)
def test_entry_reproduces(bench_dir: Path, entry: gold_errors.GoldError, question: int) -> None:
    example = _examples(bench_dir, entry.dataset)[question]
    assert (example.db_id, example.sql) == (entry.db_id, entry.sql)
    result = check_sql(example.sql, _graph(bench_dir, entry.dataset, entry.db_id))
    found = {p.type for p in result.errors}
    assert entry.problem in found
    # What the bench does with it: classified as this gold error, not a false alarm.
    assert gold_errors.find(entry.dataset, entry.db_id, question, entry.sql, found) == entry


def test_a_different_problem_is_not_excused() -> None:
    entry = ENTRIES[0]
    question = entry.questions[0]
    assert gold_errors.find(entry.dataset, entry.db_id, question, entry.sql, {"x"}) is None
    assert (
        gold_errors.find(entry.dataset, entry.db_id, question, entry.sql, {entry.problem, "x"})
        is None
    )
