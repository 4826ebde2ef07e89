"""The assistant as the harness's predictor: each question goes through the same code as
`schemawise ask` (context pack or the whole schema, the writer, the checks and at most two
fixes, the guarded run), without the sentence at the end, which the harness does not score.

The benchmark databases are indexed into their own database of the embedded server
(`schemawise_eval`), kept between runs: a second run re-indexes nothing that did not change.
Predictions are cached in a JSONL file per configuration as they come, so an interrupted run
resumes where it stopped instead of asking the model again."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

import psycopg
from psycopg import sql as pgsql

from schemawise.agent.assistant import AskOptions, Assistant, PromptMode
from schemawise.agent.llm import LLM, call_unreachable
from schemawise.db.guard import Limits
from schemawise.enrich.generated import Describe
from schemawise.errors import ModelUnreachableError
from schemawise.eval.golden import GoldenItem
from schemawise.eval.predict import EvalTarget, Prediction, Stages

EVAL_DATABASE = "schemawise_eval"


def eval_index_url() -> str:
    """The evaluation's own index database in the embedded server (created once)."""
    from schemawise.db.embedded import database_url, ensure_started

    admin = database_url(ensure_started(), "postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (EVAL_DATABASE,))
        if found.fetchone() is None:
            conn.execute(pgsql.SQL("CREATE DATABASE {}").format(pgsql.Identifier(EVAL_DATABASE)))
    url = database_url(admin, EVAL_DATABASE)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return url


def ensure_indexed(
    index_url: str,
    databases: dict[str, str],
    say: Callable[[str], None] | None = None,
    describe: Describe | None = None,
) -> None:
    """Index each `name → url` not yet indexed from that URL, or indexed with model-written
    table descriptions when `describe` is not given (or without them when it is): runs with
    and without them share the evaluation's index. An existing one is otherwise kept."""
    from schemawise.api import sources
    from schemawise.index.sources import index_source

    say = say or (lambda _: None)
    have = {s["source"]: s for s in sources(index_url=index_url)}
    described = describe is not None

    def current(name: str, url: str) -> bool:
        entry = have.get(name)
        if entry is None or entry["url"] != url:
            return False
        return bool((entry.get("options") or {}).get("describe")) == described

    missing = [(n, u) for n, u in sorted(databases.items()) if not current(n, u)]
    for number, (name, url) in enumerate(missing, start=1):
        say(f"indexing {name} ({number}/{len(missing)})")
        index_source(index_url, url, name, describe=describe, progress=say)


def benchmark_databases(
    dataset: str, data: Path, names: Iterable[str] | None = None
) -> dict[str, str]:
    """`db_id → sqlite URL` of a Spider or BIRD folder (all, or the names given)."""
    folder = data / ("database" if dataset == "spider" else "dev_databases")
    wanted = set(names) if names is not None else None
    found = {}
    for path in sorted(folder.glob("*/*.sqlite")):
        if path.stem == path.parent.name and (wanted is None or path.stem in wanted):
            found[path.stem] = f"sqlite:///{path.resolve()}"
    return found


class AssistantPredictor:
    """`union`: no database given — the pack chooses among every indexed source."""

    def __init__(
        self,
        llm: LLM,
        *,
        index_url: str,
        prompt: PromptMode = "context",
        union: bool = False,
        fix: bool = True,
        cache: Path | None = None,
    ) -> None:
        self.llm = llm
        self.assistant = Assistant(llm, index_url=index_url, failure_log=False)
        self.prompt: PromptMode = prompt
        self.union = union
        self.fix = fix
        self.name = f"{llm.name} {prompt}{' +fix' if fix else ''}{' union' if union else ''}"
        self.cache = cache
        self._cached = _read_cache(cache) if cache else {}

    def _key(self, item: GoldenItem) -> str:
        text = json.dumps([self.name, item.id, item.question, item.evidence, item.database])
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def kept(self, item: GoldenItem) -> bool:
        """Whether an earlier run already predicted this question (kept in the cache)."""
        return self._key(item) in self._cached

    def predict(self, item: GoldenItem, target: EvalTarget) -> Prediction:
        key = self._key(item)
        if key in self._cached:
            entry = self._cached[key]
            stages: Stages = entry["stages"]
            return Prediction(entry["sql"], entry["error_class"], stages)
        prediction = self._predict(item, target)
        if self.cache is not None:
            entry = {"key": key, "id": item.id, "sql": prediction.sql,
                     "error_class": prediction.error_class,
                     "stages": prediction.stages}  # fmt: skip
            with self.cache.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry, default=str) + "\n")
            self._cached[key] = entry
        return prediction

    def _predict(self, item: GoldenItem, target: EvalTarget) -> Prediction:
        options = AskOptions(
            sources=None if self.union else [target.name], evidence=item.evidence or "",
            intent="write_query", prompt=self.prompt, max_fixes=2 if self.fix else 0,
            answer=False, limits=Limits(max_rows=1000, timeout_seconds=30),
        )  # fmt: skip
        reply = self.assistant.ask(item.question, options=options)
        usage = reply.usage
        if reply.sql is None and any(call_unreachable(c) for c in usage.get("per_call", [])):
            # Nothing answered: not this question's failure. The run stops here, and what it
            # predicted so far is kept, so the same command resumes once the model is back.
            reason = reply.failure.reason if reply.failure else "the model could not be reached"
            raise ModelUnreachableError(
                f"Evaluation stopped at {item.id}: {reason}",
                "Bring the model back and run the same command: answered questions are kept.",
            )
        seconds: dict[str, float] = {"context": float(reply.context.get("seconds", 0.0))}
        for call in usage.get("per_call", []):
            seconds[call["stage"]] = seconds.get(call["stage"], 0.0) + call["seconds"]
        stages = Stages(
            pack_tables=list(reply.context.get("tables", [])),
            check_ok=reply.sql is not None and not reply.attempts[-1]["problems"]
            if reply.attempts else False,
            fix_calls=reply.fixes,
            model_calls=int(usage.get("calls", 0)),
            prompt_tokens=int(usage.get("input_tokens", 0)),
            completion_tokens=int(usage.get("output_tokens", 0)),
            seconds=seconds,
        )  # fmt: skip
        extra: dict[str, Any] = {"source": reply.source, "pack_tokens": reply.context.get("tokens"),
                                 "fixed": [p["type"] for a in reply.attempts[:-1]
                                           for p in a["problems"]]}  # fmt: skip
        stages.update(extra)  # type: ignore[typeddict-item]
        emptied = not reply.sql and reply.context.get("tables") == [] and reply.failure is not None
        error = None if reply.sql else (
            "empty_pack" if emptied else "model_error" if reply.failure else "no_sql"
        )  # fmt: skip
        return Prediction(reply.sql, error, stages)


def _read_cache(path: Path) -> dict[str, dict[str, Any]]:
    if not path.is_file():
        return {}
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue  # a torn last line after a crash
        found[entry["key"]] = entry
    return found


PromptChoice = Literal["context", "whole-schema"]


def right_database_rate(items: list[Any]) -> float | None:
    """Under --union: the share of questions whose pack chose the item's own database."""
    chosen = [(i.database, i.stages.get("source")) for i in items if i.stages.get("source")]
    return round(sum(1 for db, s in chosen if db == s) / len(chosen), 4) if chosen else None
