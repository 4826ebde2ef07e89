"""`run`: check → EXPLAIN gate → guarded execution; a database error comes back classified."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schemawise.db import connect
from schemawise.db.guard import (
    CANCELLED,
    CONNECTION_LOST,
    RESOURCE_LIMIT,
    Deadline,
    GuardedQueryError,
    GuardedSession,
    Limits,
    QueryResult,
)
from schemawise.db.urls import parse_url
from schemawise.graph.extract import ExtractOptions, extract_graph
from schemawise.graph.model import SchemaGraph
from schemawise.rows.inline import has_sw_match, rewrite
from schemawise.validate.budget import CheckTimeoutError, within
from schemawise.validate.check import CheckResult, FanoutLevel, check_sql
from schemawise.validate.errors import HINTS, classify
from schemawise.validate.explain import (
    GateLimits,
    gate_duckdb,
    gate_postgres,
    gate_sqlite,
    plan_nodes,
)
from schemawise.validate.problems import SqlProblem
from schemawise.validate.rules import Rule


@dataclass(frozen=True)
class Target:
    kind: str  # postgres, sqlite, duckdb
    location: str  # URL to run as (a SELECT-only role for the embedded database) or file path
    # The embedded database's owner: reads row-search configuration and terminates a backend
    # that outlives its deadline. None for a user's own database.
    admin: str | None = None


def resolve_target(url: str, tenant: Any = None) -> Target:
    """Where model SQL runs: never as a superuser, and for a tenant as that tenant's role."""
    parsed = parse_url(url)
    if parsed.kind == "embedded":
        from schemawise.db.embedded import admin_url
        from schemawise.db.roles import ensure_reader_role
        from schemawise.db.tenancy import ensure_tenant_role

        admin = admin_url(parsed.target)  # the reader role is managed per database
        if tenant is not None:
            return Target("postgres", ensure_tenant_role(admin, tenant), admin)
        return Target("postgres", ensure_reader_role(admin), admin)
    if parsed.kind == "postgres":
        from schemawise.db.roles import refuse_superuser

        refuse_superuser(parsed.target)
        if tenant is not None:
            from schemawise.db.tenancy import verify_session_tenant

            verify_session_tenant(parsed.target, tenant)
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
    # Where the schema graph came from: "index" (stored by `index`, catalogue unchanged),
    # "extracted" (read from the database now) or "given" (by the caller).
    graph_origin: str = "given"

    @property
    def ok(self) -> bool:
        return self.check.ok and self.error is None and self.result is not None

    def to_dict(self) -> dict[str, Any]:
        out = self.check.model_dump()
        out["ok"] = self.ok
        out["result"] = self.result.to_dict() if self.result else None
        out["error"] = self.error.model_dump() if self.error else None
        out["stages"] = self.stages
        out["graph_origin"] = self.graph_origin
        return out


def _open_session(target: Target, limits: Limits, deadline: Deadline,
                  settings: dict[str, Any]) -> GuardedSession:  # fmt: skip
    if target.kind == "postgres":
        from schemawise.db.pg_guard import PostgresSession

        return PostgresSession(
            target.location, limits, deadline, settings=settings, supervisor_url=target.admin
        )
    from schemawise.db.sandbox import SandboxSession

    return SandboxSession(target.kind, target.location, limits, deadline)


@dataclass(frozen=True)
class GateDecision:
    refusal: SqlProblem | None
    summary: str  # the plan's node kinds, for timeout hints ("" when they would leak)
    estimates_used: bool


def _gate(
    session: GuardedSession, kind: str, sql: str, graph: SchemaGraph, limits: GateLimits
) -> GateDecision:
    plan = session.explain(sql)
    if kind == "postgres":
        from schemawise.db.pg_guard import PostgresSession

        if isinstance(session, PostgresSession) and session.reads_row_secured(plan):
            # Estimates over every tenant's rows decide nothing a tenant can observe: no
            # refusal and no plan shape (Index Scan or Seq Scan would tell selectivity). The
            # deadline and the caps still bound the run.
            return GateDecision(None, "", estimates_used=False)
        kinds = sorted({str(n.get("Node Type")) for n in plan_nodes(plan)})
        return GateDecision(gate_postgres(plan, limits), ", ".join(kinds), True)
    if kind == "sqlite":
        return GateDecision(gate_sqlite(plan, graph, limits), "; ".join(plan[:10]), True)
    return GateDecision(gate_duckdb(plan, limits), "", True)


# How a run can end that the guard itself names (db/guard.py); hints in validate/errors.HINTS.
_GUARD_KINDS = frozenset({CANCELLED, CONNECTION_LOST, RESOURCE_LIMIT})


def bounded_check(
    sql: str, graph: SchemaGraph, fanout: FanoutLevel, rules: list[Rule] | None, deadline: Deadline
) -> CheckResult:
    """The static check, within the run's deadline like everything else (validate/budget.py)."""
    try:
        return within(
            deadline.remaining(), lambda: check_sql(sql, graph, fanout=fanout, rules=rules)
        )
    except CheckTimeoutError:
        result = CheckResult()
        result.errors.append(
            SqlProblem.of(
                "unsupported_query",
                "The SQL could not be checked before the run's deadline.",
                "Simplify it: fewer joins (NATURAL JOIN and USING especially), IN (…) lists "
                "instead of long OR chains, fewer nested subqueries and CTEs.",
            )
        )
        return result.finish()


def run_checked(
    url: str,
    sql: str,
    *,
    graph: SchemaGraph | None = None,
    limits: Limits | None = None,
    gate_limits: GateLimits | None = None,
    fanout: FanoutLevel = "auto",
    rules: list[Rule] | None = None,
    tenant: Any = None,
) -> RunOutcome:
    """`tenant` comes from the caller's identity (a flag, a session), never from the SQL."""
    limits = limits or Limits()
    deadline = Deadline.after(limits.timeout_seconds)  # one deadline for the whole run
    target = resolve_target(url, tenant)
    origin = "given"
    if graph is None:
        from schemawise.graph.reuse import graph_for

        choice = graph_for(url)
        graph, origin = choice.graph, choice.origin
    executed: str = sql
    params: dict[str, Any] | None = None
    settings: dict[str, Any] = {}
    outcome = RunOutcome(bounded_check(sql, graph, fanout, rules, deadline), graph_origin=origin)
    if target.kind == "postgres" and has_sw_match(sql):
        # sw_match(…) becomes the hybrid search with bound parameters; the validator and
        # the EXPLAIN gate see the rewritten query with every value inlined as a literal.
        # It is expanded only after the cheap static checks passed on the caller's text.
        if not outcome.check.ok:
            outcome.stages.append("check")
            return outcome
        import psycopg

        with psycopg.connect(target.admin or target.location) as conn:
            rewritten = rewrite(conn, sql, tenant=tenant)
        executed, params, sql = rewritten.sql, rewritten.params, rewritten.literal_sql
        settings.update({"hnsw.iterative_scan": "relaxed_order", "hnsw.ef_search": 200,
                         "hnsw.max_scan_tuples": 50000})  # fmt: skip
        outcome = RunOutcome(
            bounded_check(sql, graph, fanout, rules, deadline), graph_origin=origin
        )
    outcome.stages.append("check")
    if not outcome.check.ok:
        return outcome  # the static check runs first, even where the database would refuse
    summary = ""
    try:
        with _open_session(target, limits, deadline, settings) as session:
            decision = _gate(session, target.kind, sql, graph, gate_limits or GateLimits())
            refusal, summary = decision.refusal, decision.summary
            outcome.stages.append("explain")
            outcome.check.explain = {
                "checked": True,
                "ok": refusal is None,
                "estimates_used": decision.estimates_used,
            }
            if refusal is not None:
                outcome.check.errors.append(refusal)
                outcome.check.finish()
                return outcome
            outcome.result = session.execute(executed if target.kind == "postgres" else sql,
                                             params)  # fmt: skip
            outcome.stages.append("execute")
    except GuardedQueryError as exc:
        if exc.kind in _GUARD_KINDS:
            outcome.error = SqlProblem.of(exc.kind, exc.message, HINTS[exc.kind])
        else:
            outcome.error = classify(
                target.kind, exc.message, exc.sqlstate or ("57014" if exc.kind else None),
                graph=graph, sql=sql, explain_summary=summary,
            )  # fmt: skip
    return outcome
