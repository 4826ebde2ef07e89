"""The query writer's loop: write, check, fix. A draft goes through the same gates as any SQL
(`check`, the EXPLAIN gate, guarded execution); what they find goes back to the model as the
classified problems with their hints, at most twice, with the researcher's notes when a name
does not exist. Model SQL is never run before the static check passes, and never as a
superuser (runner.run_checked)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from schemawise.agent.draft import Draft, UnreadableReplyError, read_draft
from schemawise.agent.prompts import PriorTurn, fix_prompt, writer_instructions, writer_prompt
from schemawise.agent.researcher import SchemaLookup, column_facts, missing_names, research
from schemawise.db.guard import Limits
from schemawise.errors import ModelCallError
from schemawise.graph.model import SchemaGraph
from schemawise.runner import RunOutcome, run_checked
from schemawise.validate.check import CheckResult, check_sql
from schemawise.validate.problems import SqlProblem

MAX_FIXES = 2


@dataclass
class Database:
    """Where the writer's SQL is checked and run."""

    graph: SchemaGraph
    dialect: str
    url: str | None = None  # None: check only, nothing can run
    source: str | None = None
    tenant: Any = None


@dataclass
class Attempt:
    """One draft and what the gates said of it."""

    sql: str
    stage: str  # where it stopped: "check", "explain", "execute", or "ok"
    problems: list[SqlProblem] = field(default_factory=list)
    research: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "sql": self.sql,
            "stage": self.stage,
            "problems": [p.model_dump() for p in self.problems],
            "research": self.research,
        }


@dataclass
class Written:
    """The loop's end: a draft that passed (with its run), or the last one and why it failed."""

    prompt: str
    draft: Draft | None = None
    check: CheckResult | None = None
    run: RunOutcome | None = None
    attempts: list[Attempt] = field(default_factory=list)
    fixes: int = 0
    failure: str | None = None  # None when the last draft passed every gate

    @property
    def ok(self) -> bool:
        return self.failure is None and self.draft is not None


def _ask(llm: Any, stage: str, instructions: str, prompt: str) -> Draft:
    """One model call read as a draft; an unreadable reply is asked for again once."""
    reply = str(llm.run(stage, instructions, prompt))
    try:
        return read_draft(reply)
    except UnreadableReplyError as exc:
        again = f"{prompt}\n\nYour reply had no SQL. {exc}"
        return read_draft(str(llm.run(stage, instructions, again)))


def _stage_of(outcome: RunOutcome) -> str:
    if not outcome.check.ok:
        return "explain" if "explain" in outcome.stages else "check"
    if outcome.error is not None:
        return "execute"
    return "ok"


def _gates(
    sql: str, db: Database, run: bool, limits: Limits
) -> tuple[CheckResult, RunOutcome | None]:
    if run and db.url is not None:
        outcome = run_checked(
            db.url, sql, graph=db.graph, limits=limits, fanout="auto", tenant=db.tenant
        )
        return outcome.check, outcome
    return check_sql(sql, db.graph, dialect=db.dialect, fanout="auto"), None


def write_checked(
    llm: Any,
    question: str,
    schema_text: str,
    db: Database,
    *,
    evidence: str = "",
    join_notes: Sequence[str] = (),
    searchable: Sequence[str] = (),
    history: Sequence[PriorTurn] = (),
    missing: Sequence[str] = (),
    lookup: SchemaLookup | None = None,
    run: bool = True,
    limits: Limits | None = None,
    max_fixes: int = MAX_FIXES,
) -> Written:
    """Write SQL for the question and take it through the gates, fixing at most `max_fixes`
    times. Model failures end the loop with `failure` set; they are not raised."""
    limits = limits or Limits(max_rows=1000, timeout_seconds=30)
    lookup = lookup or SchemaLookup(db.graph)
    instructions = writer_instructions(db.dialect)
    prompt = writer_prompt(question, schema_text, evidence=evidence, join_notes=join_notes,
                           searchable=searchable, history=history, missing=missing)  # fmt: skip
    written = Written(prompt=prompt)
    try:
        draft = _ask(llm, "write", instructions, prompt)
    except (ModelCallError, UnreadableReplyError) as exc:
        written.failure = f"the model wrote no SQL: {_reason(exc)}"
        return written
    while True:
        written.draft = draft
        check, outcome = _gates(draft.query, db, run, limits)
        written.check, written.run = check, outcome
        problems = list(check.errors)
        if outcome is not None and outcome.error is not None:
            problems.append(outcome.error)
        attempt = Attempt(draft.query, _stage_of(outcome) if outcome else
                          ("ok" if check.ok else "check"), problems)  # fmt: skip
        written.attempts.append(attempt)
        if not problems:
            return written
        if written.fixes >= max_fixes:
            kinds = ", ".join(sorted({p.type for p in problems}))
            written.failure = f"still failing after {written.fixes} fixes: {kinds}"
            return written
        attempt.research = [
            *column_facts(db.graph, problems),
            *research(lookup, missing_names(problems), llm),
        ]
        try:
            draft = _ask(llm, "fix", instructions,
                         fix_prompt(prompt, draft.query, problems, attempt.research))  # fmt: skip
        except (ModelCallError, UnreadableReplyError) as exc:
            written.failure = f"the fix could not be written: {_reason(exc)}"
            return written
        written.fixes += 1


def _reason(exc: Exception) -> str:
    return exc.message if isinstance(exc, ModelCallError) else str(exc)
