"""`check`: everything wrong with one SQL statement, against the schema graph."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field
from sqlglot import exp
from sqlglot.errors import SqlglotError

from schemawise.graph.model import SchemaGraph
from schemawise.validate.checks import cartesian_problems, join_problems
from schemawise.validate.fanout import fanout_problems
from schemawise.validate.joins import analyse
from schemawise.validate.lineage import Lineage
from schemawise.validate.orphans import orphan_problems
from schemawise.validate.problems import SqlProblem
from schemawise.validate.resolve import resolve
from schemawise.validate.rules import Rule, rule_problems
from schemawise.validate.safety import check_safety

# error: every fan-out risk refuses; warn: none does; auto: a SUM or AVG over rows a join
# repeats refuses (the number is wrong whatever the data), other risks warn.
FanoutLevel = Literal["error", "warn", "auto"]


class CheckResult(BaseModel):
    ok: bool = True
    errors: list[SqlProblem] = Field(default_factory=list)
    warnings: list[SqlProblem] = Field(default_factory=list)
    tables: list[str] = Field(default_factory=list)
    columns: list[str] = Field(default_factory=list)
    joins: list[dict[str, Any]] = Field(default_factory=list)
    fanout: list[SqlProblem] = Field(default_factory=list)
    explain: dict[str, Any] = Field(default_factory=dict)

    def finish(self) -> CheckResult:
        self.ok = not self.errors
        return self


def check_sql(
    sql: str,
    graph: SchemaGraph,
    *,
    dialect: str | None = None,
    fanout: FanoutLevel = "warn",
    rules: list[Rule] | None = None,
) -> CheckResult:
    """Safety first (a refused statement is not analysed further), then names, joins,
    fan-out and business rules."""
    result = CheckResult()
    dialect = dialect or graph.dialect or "postgres"
    safety = check_safety(sql, dialect)
    if not safety.ok or safety.tree is None:
        result.errors = safety.problems
        return result.finish()
    try:
        return _analyse(result, safety.tree, sql, graph, fanout, rules or [])
    except (SqlglotError, RecursionError, ValueError, KeyError, AttributeError, TypeError) as exc:
        # Fail closed: a query the checks cannot analyse does not pass.
        result.errors.append(
            SqlProblem.of(
                "unsupported_query",
                f"The query could not be analysed ({type(exc).__name__}: {str(exc)[:200]}).",
                "Simplify the query (fewer nesting levels, standard syntax).",
            )
        )
        return result.finish()


def _analyse(
    result: CheckResult,
    tree: exp.Expression,
    sql: str,
    graph: SchemaGraph,
    fanout: FanoutLevel,
    rules: list[Rule],
) -> CheckResult:
    resolution = resolve(tree, graph)
    result.errors.extend(resolution.problems)
    result.tables = resolution.tables
    if resolution.tree is None or resolution.problems:
        return result.finish()
    tree = resolution.tree
    explicit_cross = bool(re.search(r"\bcross\s+join\b", sql, flags=re.IGNORECASE))
    result.columns = sorted({f"{c.table}.{c.name}" for c in tree.find_all(exp.Column) if c.table})
    all_facts = analyse(tree, graph)
    lineage = Lineage.of(all_facts)
    for facts in all_facts:
        errors, warnings = join_problems(facts, graph)
        result.errors.extend(errors)
        result.warnings.extend(warnings)
        errors, warnings = cartesian_problems(facts, explicit_cross_join=explicit_cross)
        result.errors.extend(errors)
        result.warnings.extend(warnings)
        for pair in facts.pairs:
            result.joins.append(
                {
                    "left": f"{facts.tables[pair.left_alias]}.{pair.left_column}",
                    "right": f"{facts.tables[pair.right_alias]}.{pair.right_column}",
                    "edge": pair.edge.describe() if pair.edge else None,
                    "cardinality": pair.edge.cardinality if pair.edge else None,
                }
            )
        result.warnings.extend(orphan_problems(facts))
        risks = fanout_problems(facts, graph, lineage)
        result.fanout.extend(risks)
        for risk in risks:
            refuse = fanout == "error" or (fanout == "auto" and risk.model_dump().get("certain"))
            (result.errors if refuse else result.warnings).append(risk)
        result.errors.extend(rule_problems(facts, rules, graph, result.tables))
    return result.finish()
