"""The harness: every item's prediction and gold queries run read-only in the sandbox, compared
as the official evaluator of the dataset compares (`eval.metrics`), failures attributed to a
stage (`eval.attribution`), and the whole run summarised as one JSON document.

Execution: one sandboxed child per item (`db.sandbox`, as `run_sqlite` uses it) runs the gold
queries not yet cached, then the prediction; starting a child costs about 0.1 s here, so one
per item rather than one per statement halves a run. The child's deadline is the timeout times
the statements it runs, gold queries first: a prediction that runs past it is stopped there
and cannot cost a gold result. Gold results are cached per (database, SQL) for the run.

Items whose database holds no rows (BIRD dev here, Spider's wta_1) are not measured for
execution accuracy: every query that runs returns nothing there, so agreement would mean
nothing. They still count for "executes" and for attribution of SQL that does not run.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from schemawise.bench.linking import gold_links
from schemawise.bench.timing import percentiles
from schemawise.db.guard import Deadline, GuardedQueryError, Limits, QueryResult
from schemawise.db.sandbox import SandboxSession
from schemawise.db.urls import parse_url
from schemawise.errors import GoldenSetError, SchemawiseError
from schemawise.eval.attribution import (
    ATTRIBUTIONS,
    GoldFacts,
    attribute,
    parse,
    parse_join_key,
)
from schemawise.eval.datasets import database_path
from schemawise.eval.golden import (
    GoldenItem,
    load_benchmark,
    load_golden,
    parse_column,
    sample,
    with_rows,
)
from schemawise.eval.metrics import Convention, first_match, has_top_level_order_by
from schemawise.eval.predict import EvalTarget, Prediction, Predictor
from schemawise.graph.model import SchemaGraph
from schemawise.validate.errors import classify

EvalDataset = Literal["spider", "bird", "golden"]
ResolveDatabase = Callable[[GoldenItem], EvalTarget]
# Called after each item with (items done, items in all, the item's result).
Progress = Callable[[int, int, "ItemResult"], None]

# Why an item has no execution-accuracy verdict.
NO_ROWS = "database_without_rows"
GOLD_FAILED = "gold_failed"
GOLD_TRUNCATED = "gold_over_row_cap"

CONVENTION_OF: dict[EvalDataset, Convention] = {
    "spider": "spider",
    "bird": "bird",
    "golden": "spider",
}


@dataclass(frozen=True)
class EvalSettings:
    convention: Convention = "spider"
    float_digits: int | None = None  # None: exact, as the official evaluators compare
    # Large enough for every Spider/BIRD gold result; a gold result past it is not measured.
    max_rows: int = 100_000
    max_bytes: int = 100_000_000
    timeout_seconds: float = 30.0  # per statement


@dataclass
class _GoldRun:
    rows: list[list[Any]] | None
    order_matters: bool
    failure: str | None = None  # GOLD_FAILED / GOLD_TRUNCATED
    message: str | None = None


@dataclass
class ItemResult:
    id: str
    database: str
    question: str
    sql: str | None
    error_class: str | None  # the predictor's, when it produced no SQL
    parsed: bool  # sqlglot reads it as one statement
    executes: bool
    correct: bool | None  # None: not measured (`not_measured` says why)
    not_measured: str | None = None
    matched_gold: int | None = None  # which gold query the prediction matched
    execution_error: str | None = None  # classified type, e.g. unknown_column, timeout
    execution_message: str | None = None
    truncated: bool = False  # the prediction's rows passed the row or byte cap
    attribution: str | None = None  # for failed items: the stage (eval.attribution)
    table_recall: float | None = None  # with a pack: share of gold tables in it
    strict_table: bool | None = None  # with a pack: every gold table in it
    seconds: dict[str, float] = field(default_factory=dict)
    stages: dict[str, Any] = field(default_factory=dict)


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


@dataclass
class EvalReport:
    dataset: str
    data: str
    predictor: str
    settings: EvalSettings
    items: list[ItemResult]
    skipped: dict[str, int] = field(default_factory=dict)  # before sampling, e.g. no rows
    sampled: dict[str, Any] = field(default_factory=dict)  # limit, seed, of how many
    notes: list[str] = field(default_factory=list)

    @property
    def measured(self) -> list[ItemResult]:
        return [i for i in self.items if i.correct is not None]

    @property
    def execution_accuracy(self) -> float | None:
        measured = self.measured
        return _rate(sum(1 for i in measured if i.correct), len(measured))

    def attribution_counts(self) -> dict[str, int]:
        counts = Counter(i.attribution for i in self.items if i.attribution)
        return {name: counts.get(name, 0) for name in ATTRIBUTIONS}

    def _cost(self) -> dict[str, Any]:
        def total(key: str) -> int:
            return sum(int(i.stages.get(key, 0) or 0) for i in self.items)

        stage_seconds: dict[str, list[float]] = {}
        for item in self.items:
            for stage, seconds in item.seconds.items():
                stage_seconds.setdefault(stage, []).append(seconds)
            for stage, seconds in (item.stages.get("seconds") or {}).items():
                stage_seconds.setdefault(f"predictor.{stage}", []).append(float(seconds))
        n = len(self.items)
        model_calls = total("model_calls")
        return {
            "model_calls": model_calls,
            "model_calls_per_question": _rate(model_calls, n),
            "fix_calls": total("fix_calls"),
            "prompt_tokens": total("prompt_tokens"),
            "completion_tokens": total("completion_tokens"),
            "seconds": {k: percentiles(v) for k, v in sorted(stage_seconds.items())},
        }

    def to_dict(self, *, items: bool = True) -> dict[str, Any]:
        n = len(self.items)
        with_pack = [i for i in self.items if i.table_recall is not None]
        recalls = [i.table_recall for i in with_pack if i.table_recall is not None]
        not_measured = Counter(i.not_measured for i in self.items if i.not_measured)
        report: dict[str, Any] = {
            "benchmark": "eval",
            "dataset": self.dataset,
            "data": self.data,
            "predictor": self.predictor,
            "settings": asdict(self.settings),
            "sampled": self.sampled,
            "counts": {
                "questions": n,
                "databases": len({i.database for i in self.items}),
                "measured": len(self.measured),
                "not_measured": dict(sorted(not_measured.items())),
                "skipped": self.skipped,
                "without_sql": sum(1 for i in self.items if i.sql is None),
                "with_pack": len(with_pack),
            },
            "metrics": {
                "execution_accuracy": self.execution_accuracy,
                "correct": sum(1 for i in self.items if i.correct),
                "valid_sql_rate": _rate(sum(1 for i in self.items if i.parsed), n),
                "executes_rate": _rate(sum(1 for i in self.items if i.executes), n),
                "table_recall_mean": round(sum(recalls) / len(recalls), 4) if recalls else None,
                "strict_table_recall": _rate(
                    sum(1 for i in with_pack if i.strict_table), len(with_pack)
                ),
            },
            "attribution": self.attribution_counts(),
            "execution_errors": dict(
                Counter(i.execution_error for i in self.items if i.execution_error)
            ),
            "cost": self._cost(),
            "notes": self.notes,
        }
        if items:
            report["items"] = [asdict(i) for i in self.items]
        return report

    def to_json(self, *, items: bool = True, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(items=items), indent=indent, default=str)


def _run_statements(
    target: EvalTarget, sqls: Sequence[str], settings: EvalSettings
) -> list[QueryResult | GuardedQueryError]:
    """Each statement's result or error, in order, in one sandboxed child."""
    if not sqls:
        return []
    limits = Limits(
        max_rows=settings.max_rows,
        timeout_seconds=settings.timeout_seconds,
        max_bytes=settings.max_bytes,
    )
    deadline = Deadline.after(settings.timeout_seconds * len(sqls))
    out: list[QueryResult | GuardedQueryError] = []
    try:
        with SandboxSession(target.backend, str(target.path), limits, deadline) as session:
            for sql in sqls:
                try:
                    out.append(session.execute(sql))
                except GuardedQueryError as exc:  # a lost session fails every later one too
                    out.append(exc)
    except GuardedQueryError as exc:  # the child could not start or open the database
        out += [exc] * (len(sqls) - len(out))
    return out


def _error_type(error: GuardedQueryError, backend: str, sql: str) -> str:
    if error.kind:
        return error.kind
    return classify(backend, error.message, error.sqlstate, sql=sql).type


class _Harness:
    """State of one run: graphs and gold results per database, loaded once."""

    def __init__(self, settings: EvalSettings) -> None:
        self.settings = settings
        self.graphs: dict[Path, SchemaGraph | None] = {}
        self.golds: dict[tuple[Path, str], _GoldRun] = {}

    def graph(self, target: EvalTarget) -> SchemaGraph | None:
        if target.path not in self.graphs:
            from schemawise.runner import load_graph

            try:
                self.graphs[target.path] = load_graph(target.url, data_checks=False)
            except SchemawiseError:
                self.graphs[target.path] = None  # attribution falls back to names
        return self.graphs[target.path]

    def has_rows(self, target: EvalTarget) -> bool:
        graph = self.graph(target)
        return graph is not None and any((t.row_count or 0) > 0 for t in graph.tables)

    def _store_gold(self, target: EvalTarget, sql: str, outcome: Any) -> None:
        order = has_top_level_order_by(sql, target.backend)
        if isinstance(outcome, GuardedQueryError):
            run = _GoldRun(None, order, GOLD_FAILED, outcome.message[:300])
        elif outcome.truncated:
            run = _GoldRun(None, order, GOLD_TRUNCATED, outcome.truncated_reason)
        else:
            run = _GoldRun(outcome.rows, order)
        self.golds[(target.path, sql)] = run

    def evaluate_item(
        self, item: GoldenItem, target: EvalTarget, prediction: Prediction, predict_seconds: float
    ) -> ItemResult:
        sql = prediction.sql
        stages: dict[str, Any] = dict(prediction.stages)
        result = ItemResult(
            id=item.id, database=target.name, question=item.question, sql=sql,
            error_class=prediction.error_class,
            parsed=sql is not None and parse(sql, target.backend) is not None,
            executes=False, correct=None, stages=stages,
            seconds={"predict": round(predict_seconds, 4)},
        )  # fmt: skip
        pending = [g for g in dict.fromkeys(item.gold) if (target.path, g) not in self.golds]
        started = time.monotonic()
        statements = [*pending, *([sql] if sql is not None else [])]
        outcomes = _run_statements(target, statements, self.settings)
        result.seconds["execute"] = round(time.monotonic() - started, 4)
        for gold_sql, outcome in zip(pending, outcomes, strict=False):
            self._store_gold(target, gold_sql, outcome)
        predicted = outcomes[len(pending)] if sql is not None else None
        if isinstance(predicted, GuardedQueryError):
            result.execution_error = _error_type(predicted, target.backend, sql or "")
            result.execution_message = predicted.message[:300]
        elif predicted is not None:
            result.executes = True
            result.truncated = predicted.truncated
        self._score(result, item, target, predicted)
        self._retrieval(result, item, target)
        if result.correct is False or not result.executes:
            result.attribution = self._attribute(result, item, target)
        return result

    def _score(
        self,
        result: ItemResult,
        item: GoldenItem,
        target: EvalTarget,
        predicted: QueryResult | GuardedQueryError | None,
    ) -> None:
        if not self.has_rows(target):
            result.not_measured = NO_ROWS
            return
        runs = [self.golds[(target.path, g)] for g in item.gold]
        usable = [(i, r) for i, r in enumerate(runs) if r.rows is not None]
        if not usable:
            result.not_measured = next(r.failure for r in runs if r.failure)
            return
        if not isinstance(predicted, QueryResult) or predicted.truncated:
            result.correct = False
            return
        match = first_match(
            [(r.rows or [], r.order_matters) for _, r in usable],
            predicted.rows,
            convention=self.settings.convention,
            float_digits=self.settings.float_digits,
        )
        result.correct = match is not None
        result.matched_gold = usable[match][0] if match is not None else None

    def gold_tables(self, item: GoldenItem, target: EvalTarget) -> set[str] | None:
        """The tables the item's (first) gold query reads, or as the item states them."""
        if item.tables:
            return {t.lower() for t in item.tables}
        graph = self.graph(target)
        links = gold_links(item.gold[0], graph) if graph is not None else None
        return links[0] if links is not None else None

    def _retrieval(self, result: ItemResult, item: GoldenItem, target: EvalTarget) -> None:
        pack = result.stages.get("pack_tables")
        if pack is None:
            return
        gold = self.gold_tables(item, target)
        if not gold:
            return
        kept = {str(t).lower() for t in pack}
        result.table_recall = round(len(gold & kept) / len(gold), 4)
        result.strict_table = gold <= kept

    def _attribute(self, result: ItemResult, item: GoldenItem, target: EvalTarget) -> str:
        pack = result.stages.get("pack_tables")
        facts = GoldFacts(
            tables=frozenset(t.lower() for t in item.tables) if item.tables else None,
            columns=frozenset(parse_column(c) for c in item.columns) if item.columns else None,
            join_keys=(
                frozenset(parse_join_key(k) for k in item.join_keys) if item.join_keys else None
            ),
        )
        return attribute(
            result.sql,
            item.gold,
            self.graph(target),
            executes=result.executes,
            check_ok=result.stages.get("check_ok"),
            pack_tables=pack,
            gold_tables=self.gold_tables(item, target) if pack is not None else None,
            facts=facts,
            dialect=target.backend,
        )


def evaluate(
    items: Sequence[GoldenItem],
    predictor: Predictor,
    resolve_database: ResolveDatabase,
    *,
    progress: Progress | None = None,
    settings: EvalSettings | None = None,
    dataset: str = "golden",
    data: str = "",
) -> EvalReport:
    """Predict and score every item. Databases are resolved for all items first, so that a
    missing one fails before any model is called. An exception of the predictor ends the run:
    a predictor reports its own failures as a Prediction without SQL and an `error_class`."""
    settings = settings or EvalSettings()
    targets = [resolve_database(item) for item in items]
    harness = _Harness(settings)
    results: list[ItemResult] = []
    for done, (item, target) in enumerate(zip(items, targets, strict=True), start=1):
        started = time.monotonic()
        prediction = predictor.predict(item, target)
        result = harness.evaluate_item(item, target, prediction, time.monotonic() - started)
        results.append(result)
        if progress is not None:
            progress(done, len(items), result)
    report = EvalReport(dataset, data, getattr(predictor, "name", type(predictor).__name__),
                        settings, results)  # fmt: skip
    if any(r.not_measured == NO_ROWS for r in results):
        report.notes.append(
            "Some databases hold no rows (e.g. the BIRD dev databases here): their items are "
            "not measured for execution accuracy, only for whether the SQL executes."
        )
    return report


def _target_of_location(location: str, name: str) -> EvalTarget:
    """A SQLite or DuckDB file named by a path or URL (a golden item's database)."""
    try:
        parsed = parse_url(location)
    except SchemawiseError as exc:
        raise GoldenSetError(f"Database {location!r}: {exc.message}", exc.hint) from None
    if parsed.kind not in ("sqlite", "duckdb"):
        raise GoldenSetError(
            f"Database {location!r}: the harness runs SQLite and DuckDB files only for now.",
            "Point the golden set at a .sqlite or .duckdb file.",
        )
    path = Path(parsed.target)
    if not path.is_file():
        raise GoldenSetError(
            f"Database file {path} not found.", "Check `database` in the golden set."
        )
    return EvalTarget(name, "sqlite" if parsed.kind == "sqlite" else "duckdb", path.resolve())


def benchmark_resolver(dataset: Literal["spider", "bird"], data: Path) -> ResolveDatabase:
    def resolve_database(item: GoldenItem) -> EvalTarget:
        db_id = item.database or ""
        return EvalTarget(db_id, "sqlite", database_path(dataset, data, db_id))

    return resolve_database


def golden_resolver(default: str | None) -> ResolveDatabase:
    """Items name their database, or run on `default` (a path or URL)."""
    cache: dict[str, EvalTarget] = {}

    def resolve_database(item: GoldenItem) -> EvalTarget:
        location = item.database or default
        if location is None:
            raise GoldenSetError(
                f"Item {item.id!r} names no database and none was given.",
                "Add `database:` to the item or the file, or give one with --data "
                "(a path or sqlite:/// URL).",
            )
        if location not in cache:
            cache[location] = _target_of_location(location, item.database or Path(location).stem)
        return cache[location]

    return resolve_database


def run_eval(
    dataset: EvalDataset,
    data: Path | str | None,
    *,
    golden: Path | None = None,
    limit: int | None = None,
    seed: int = 0,
    predictor: Predictor,
    progress: Progress | None = None,
    only: Callable[[GoldenItem], bool] | None = None,
) -> EvalReport:
    """What `schemawise eval` runs. `spider`/`bird`: `data` is the dataset folder (Spider: the
    databases with rows only); `golden`: `golden` is the YAML/JSONL file and `data` the
    database for items that name none (or None). `limit` draws a sample seeded by `seed`."""
    skipped: dict[str, int] = {}
    if dataset == "golden":
        if golden is None:
            raise GoldenSetError(
                "No golden set given.",
                "Give the YAML or JSONL file of questions with --golden FILE.",
            )
        items = load_golden(golden)
        resolver = golden_resolver(str(data) if data is not None else None)
    elif dataset in ("spider", "bird"):
        if golden is not None:
            raise GoldenSetError(
                f"A golden set was given with dataset {dataset!r}.",
                "Use the dataset `golden` for a golden file, or leave the file out.",
            )
        if data is None:
            raise GoldenSetError(f"No {dataset} folder given.", "Give e.g. ../shared/bench/spider.")
        folder = Path(data)
        items = load_benchmark(dataset, folder)
        if dataset == "spider":
            kept = with_rows(items, dataset, folder)
            if len(kept) < len(items):
                skipped[NO_ROWS] = len(items) - len(kept)
            items = kept
        resolver = benchmark_resolver(dataset, folder)
    else:
        raise GoldenSetError(f"Unknown dataset {dataset!r}.", "Use spider, bird or golden.")
    chosen = sample(items, limit, seed)
    # `only`: score part of the sample (e.g. the questions an interrupted run answered); the
    # sample itself is drawn as always, so the part is a subset of the very same questions.
    scored = [item for item in chosen if only(item)] if only is not None else chosen
    report = evaluate(
        scored,
        predictor,
        resolver,
        progress=progress,
        settings=EvalSettings(convention=CONVENTION_OF[dataset]),
        dataset=dataset,
        data=str(golden if dataset == "golden" else data),
    )
    report.skipped = skipped
    report.sampled = {"limit": limit, "seed": seed, "of": len(items), "chosen": len(chosen)}
    if only is not None:
        report.sampled["scored"] = len(scored)
        report.notes.append(
            f"Only {len(scored)} of the {len(chosen)} sampled questions were scored: those "
            "with a kept prediction (--kept-only)."
        )
    if skipped.get(NO_ROWS):
        report.notes.append(
            f"{skipped[NO_ROWS]} questions on databases without rows were left out before "
            "sampling (Spider's wta_1 here)."
        )
    return report
