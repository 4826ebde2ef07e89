"""`run`: check → EXPLAIN gate → guarded execution; a database error comes back classified."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schemawise.db import connect
from schemawise.db.guard import (
    GuardedQueryError,
    Limits,
    QueryResult,
    explain_duckdb,
    explain_postgres,
    explain_sqlite,
    run_duckdb,
    run_postgres,
    run_sqlite,
)
from schemawise.db.urls import parse_url
from schemawise.graph.extract import ExtractOptions, extract_graph
from schemawise.graph.model import SchemaGraph
from schemawise.rows.inline import has_sw_match, rewrite
from schemawise.validate.check import CheckResult, FanoutLevel, check_sql
from schemawise.validate.errors import classify
from schemawise.validate.explain import GateLimits, gate_duckdb, gate_postgres, gate_sqlite
from schemawise.validate.problems import SqlProblem
from schemawise.validate.rules import Rule


@dataclass(frozen=True)
class Target:
    kind: str  # postgres, sqlite, duckdb
    location: str  # URL to run as (a SELECT-only role for the embedded database) or file path


def resolve_target(url: str) -> Target:
    """Where model SQL runs: never as a superuser."""
    parsed = parse_url(url)
    if parsed.kind == "embedded":
        from schemawise.db.embedded import ensure_started
        from schemawise.db.roles import ensure_reader_role

        return Target("postgres", ensure_reader_role(ensure_started()))
    if parsed.kind == "postgres":
        from schemawise.db.roles import refuse_superuser

        refuse_superuser(parsed.target)
        return Target("postgres", parsed.target)
    return Target(parsed.kind, parsed.target)


def load_graph(url: str, *, data_checks: bool = True, budget_seconds: float = 20.0) -> SchemaGraph:
    with connect(url) as source:
        return extract_graph(
            source, ExtractOptions(data_checks=data_checks, budget_seconds=budget_seconds)
        )


@dataclass
class RunOutcome:
    check: CheckResult
    result: QueryResult | None = None
    error: SqlProblem | None = None
    stages: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.check.ok and self.error is None and self.result is not None

    def to_dict(self) -> dict[str, Any]:
        out = self.check.model_dump()
        out["ok"] = self.ok
        out["result"] = self.result.to_dict() if self.result else None
        out["error"] = self.error.model_dump() if self.error else None
        out["stages"] = self.stages
        return out


def _gate(
    target: Target, sql: str, graph: SchemaGraph, limits: GateLimits, timeout: float
) -> tuple[SqlProblem | None, str]:
    """Refusal (or None) and a summary of the plan's node kinds for timeout hints."""
    if target.kind == "postgres":
        plan = explain_postgres(target.location, sql, timeout)
        kinds = sorted({str(n.get("Node Type")) for n in _nodes(plan)})
        return gate_postgres(plan, limits), ", ".join(kinds)
    if target.kind == "sqlite":
        details = explain_sqlite(target.location, sql, timeout)
        return gate_sqlite(details, graph, limits), "; ".join(details[:10])
    plan_text = explain_duckdb(target.location, sql)
    return gate_duckdb(plan_text, limits), ""


def _nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    out = [plan]
    for child in plan.get("Plans", []) or []:
        out.extend(_nodes(child))
    return out


def run_checked(
    url: str,
    sql: str,
    *,
    graph: SchemaGraph | None = None,
    limits: Limits | None = None,
    gate_limits: GateLimits | None = None,
    fanout: FanoutLevel = "warn",
    rules: list[Rule] | None = None,
    tenant: Any = None,
) -> RunOutcome:
    """`tenant` comes from the caller's identity (a flag, a session), never from the SQL."""
    limits = limits or Limits()
    target = resolve_target(url)
    graph = graph or load_graph(url)
    executed: str = sql
    params: dict[str, Any] | None = None
    settings: dict[str, Any] = {"schemawise.tenant": tenant} if tenant is not None else {}
    if target.kind == "postgres" and has_sw_match(sql):
        # sw_match(…) becomes the hybrid search with bound parameters; the validator and
        # the EXPLAIN gate see the rewritten query with every value inlined as a literal.
        import psycopg

        with psycopg.connect(target.location) as conn:
            rewritten = rewrite(conn, sql, tenant=tenant)
        executed, params, sql = rewritten.sql, rewritten.params, rewritten.literal_sql
        settings.update({"hnsw.iterative_scan": "relaxed_order", "hnsw.ef_search": 200,
                         "hnsw.max_scan_tuples": 50000})  # fmt: skip
    outcome = RunOutcome(check_sql(sql, graph, fanout=fanout, rules=rules))
    outcome.stages.append("check")
    if not outcome.check.ok:
        return outcome  # the static check runs first, even where the database would refuse
    summary = ""
    try:
        refusal, summary = _gate(
            target, sql, graph, gate_limits or GateLimits(), limits.timeout_seconds
        )
        outcome.stages.append("explain")
        outcome.check.explain = {"checked": True, "ok": refusal is None}
        if refusal is not None:
            outcome.check.errors.append(refusal)
            outcome.check.finish()
            return outcome
        if target.kind == "postgres":
            outcome.result = run_postgres(
                target.location, executed, limits, params=params, settings=settings
            )
        elif target.kind == "sqlite":
            outcome.result = run_sqlite(target.location, sql, limits)
        else:
            outcome.result = run_duckdb(target.location, sql, limits)
        outcome.stages.append("execute")
    except GuardedQueryError as exc:
        outcome.error = classify(
            target.kind, exc.message, exc.sqlstate, graph=graph, sql=sql, explain_summary=summary
        )
    return outcome
