"""The seam between the harness and whatever writes SQL: a `Predictor` gets a golden item and
the database it is about and returns a `Prediction` — the SQL, or why there is none, and what
it observed on the way (`Stages`), which the harness turns into retrieval figures, per-stage
attribution and cost. The assistant in `schemawise.agent` plugs in here; the two predictors
below need no model."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, TypedDict

from schemawise.eval.golden import GoldenItem

Backend = Literal["sqlite", "duckdb"]


@dataclass(frozen=True)
class EvalTarget:
    """The database an item is asked about: a file the harness runs SQL on in the sandbox."""

    name: str  # the db_id, or the item's database as written
    backend: Backend
    path: Path

    @property
    def url(self) -> str:
        """The URL the rest of schemawise takes (`connect`, `load_graph`, a context pack)."""
        return f"{self.backend}:///{self.path}"


class Stages(TypedDict, total=False):
    """What a predictor observed, all optional: the harness reports what is there.

    `pack_tables`/`pack_columns`: the context pack given to the writer (`table`,
    `table.column`); `check_ok`: whether the static check passed the final SQL; `fix_calls`:
    rounds of the fix loop; `model_calls`, `prompt_tokens`, `completion_tokens`: summed over
    the item; `seconds`: wall time per stage, e.g. {"context": 0.2, "write": 3.1}."""

    pack_tables: list[str]
    pack_columns: list[str]
    check_ok: bool
    fix_calls: int
    model_calls: int
    prompt_tokens: int
    completion_tokens: int
    seconds: dict[str, float]


@dataclass
class Prediction:
    sql: str | None  # None: no SQL was produced (`error_class` says why)
    error_class: str | None = None  # e.g. "model_error", "no_sql", "check_failed"
    stages: Stages = field(default_factory=lambda: Stages())


class Predictor(Protocol):
    """Writes SQL for one item. `name` labels the report."""

    name: str

    def predict(self, item: GoldenItem, target: EvalTarget) -> Prediction: ...


class GoldPredictor:
    """Answers with the item's first gold query (`--gold-as-prediction`): every question must
    score as right, which tests the harness and the data rather than a writer."""

    name = "gold"

    def predict(self, item: GoldenItem, target: EvalTarget) -> Prediction:
        return Prediction(sql=item.gold[0])


class FixedPredictor:
    """Answers with given SQL per item id (None: no SQL), with the stages given per id (e.g. a
    pack, to test retrieval figures); an id it does not know is the caller's error, not a
    wrong answer."""

    name = "fixed"

    def __init__(
        self,
        sql_by_id: Mapping[str, str | None],
        *,
        stages_by_id: Mapping[str, Stages] | None = None,
    ) -> None:
        self.sql_by_id = dict(sql_by_id)
        self.stages_by_id = dict(stages_by_id or {})

    def predict(self, item: GoldenItem, target: EvalTarget) -> Prediction:
        if item.id not in self.sql_by_id:
            raise KeyError(f"FixedPredictor has no SQL for item {item.id!r}")
        sql = self.sql_by_id[item.id]
        stages = Stages(**self.stages_by_id.get(item.id, Stages()))
        return Prediction(sql=sql, error_class=None if sql else "no_sql", stages=stages)
