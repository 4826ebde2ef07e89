"""Gold queries the validator rightly refuses, from the reviewed list in gold_errors.yml.

A flagged gold query leaves the false-alarm rate only when it matches an entry exactly (same
question, same SQL, and every error of the check of the type the entry states): a new or
different problem on a listed query is still a false alarm until someone reviews it."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

DEFAULT_PATH = Path(__file__).with_name("gold_errors.yml")


class GoldError(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    dataset: Literal["spider", "bird"]
    db_id: str = Field(min_length=1)
    # Indexes in the dataset's dev.json; a query asked twice shares one entry.
    questions: tuple[int, ...] = Field(min_length=1)
    sql: str = Field(min_length=1)
    problem: str = Field(min_length=1)
    # An entry without a reason anyone can check would hide a checker error: refuse it.
    reason: str = Field(min_length=40)

    def matches(
        self, dataset: str, db_id: str, question: int, sql: str, error_types: set[str]
    ) -> bool:
        return (
            self.dataset == dataset
            and self.db_id == db_id
            and question in self.questions
            and self.sql == sql
            and error_types == {self.problem}
        )


def load(path: Path = DEFAULT_PATH) -> list[GoldError]:
    raw = yaml.safe_load(path.read_text())
    if not isinstance(raw, list):
        raise ValueError(f"{path}: expected a list of entries")
    entries = [GoldError.model_validate(item) for item in raw]
    seen: set[tuple[str, int]] = set()
    for entry in entries:
        for question in entry.questions:
            if (entry.dataset, question) in seen:
                raise ValueError(f"{path}: {entry.dataset} question {question} listed twice")
            seen.add((entry.dataset, question))
    return entries


@cache
def reviewed() -> tuple[GoldError, ...]:
    return tuple(load())


def find(
    dataset: str, db_id: str, question: int, sql: str, error_types: set[str]
) -> GoldError | None:
    """The reviewed entry this flagged gold query is, or None (then it is a false alarm)."""
    for entry in reviewed():
        if entry.matches(dataset, db_id, question, sql, error_types):
            return entry
    return None
