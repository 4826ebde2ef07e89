"""Business rules on metrics: "net revenue over orders.amt counts statuses A and S only, minus
refunds". Rules load from YAML (the overlay file will carry the same `rules:` list)."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, Field, ValidationError
from sqlglot import exp

from schemawise.errors import SchemawiseError
from schemawise.graph.model import SchemaGraph
from schemawise.validate.joins import ScopeJoins
from schemawise.validate.problems import SqlProblem


class RequiredFilter(BaseModel):
    column: str  # table.column (schema.table.column on Postgres)
    values: list[str]


class Rule(BaseModel):
    name: str
    when_aggregating: str  # table.column whose SUM/AVG/COUNT triggers the rule
    require_filter: RequiredFilter | None = None
    require_table: str | None = None  # a table the query must also read (e.g. refunds)
    message: str = ""


class RuleSet(BaseModel):
    rules: list[Rule] = Field(default_factory=list)


def load_rules(path: Path) -> list[Rule]:
    if not path.is_file():
        raise SchemawiseError(f"No rules file at {path}.", "Give a YAML file with `rules:`.")
    try:
        data = yaml.safe_load(path.read_text()) or {}
        return RuleSet.model_validate(data).rules
    except (yaml.YAMLError, ValidationError) as exc:
        raise SchemawiseError(
            f"{path} is not a valid rules file: {str(exc).splitlines()[0]}",
            "Each rule needs `name` and `when_aggregating: table.column`; see README.",
        ) from exc


def _split(qualified: str) -> tuple[str, str]:
    table, _, column = qualified.rpartition(".")
    return table, column.lower()


def _filtered_values(select: exp.Select, alias: str, column: str) -> list[set[str]] | None:
    """Value sets the WHERE clause restricts `alias.column` to (None when it does not)."""
    where = select.args.get("where")
    if where is None:
        return None
    sets: list[set[str]] = []
    for node in where.find_all(exp.In, exp.EQ):
        target = node.this if isinstance(node, exp.In) else node.left
        if not (
            isinstance(target, exp.Column)
            and target.table == alias
            and target.name.lower() == column
        ):
            continue
        if isinstance(node, exp.In):
            values = {e.name for e in node.expressions if isinstance(e, exp.Literal)}
        else:
            values = {node.right.name} if isinstance(node.right, exp.Literal) else set()
        if values:
            sets.append(values)
    return sets or None


def rule_problems(
    facts: ScopeJoins, rules: list[Rule], graph: SchemaGraph, all_tables: list[str]
) -> list[SqlProblem]:
    select = facts.scope.expression
    if not isinstance(select, exp.Select) or not rules:
        return []
    problems = []
    for rule in rules:
        table, column = _split(rule.when_aggregating)
        target = graph.table(table)
        if target is None:
            continue
        aliases = [a for a, t in facts.tables.items() if t == target.name]
        used = [
            agg
            for agg in select.find_all(exp.Sum, exp.Avg, exp.Count)
            for c in agg.find_all(exp.Column)
            if c.table in aliases and c.name.lower() == column
        ]
        if not used:
            continue
        broken = []
        if rule.require_filter is not None:
            f_table, f_column = _split(rule.require_filter.column)
            f_target = graph.table(f_table)
            allowed = set(rule.require_filter.values)
            f_aliases = [a for a, t in facts.tables.items() if f_target and t == f_target.name]
            sets = [s for a in f_aliases for s in (_filtered_values(select, a, f_column) or [])]
            if not any(s <= allowed for s in sets):
                broken.append(
                    f"filter {rule.require_filter.column} IN ({', '.join(sorted(allowed))})"
                )
        if rule.require_table is not None:
            required = graph.table(rule.require_table)
            if required is None or required.name not in all_tables:
                broken.append(f"account for {rule.require_table}")
        if broken:
            problems.append(
                SqlProblem.of(
                    "business_rule",
                    f"Rule '{rule.name}' is broken: {used[0].sql()} must "
                    + " and ".join(broken)
                    + "."
                    + (f" {rule.message}" if rule.message else ""),
                    "Apply the rule's filter and tables, or aggregate a different column.",
                    rule=rule.name,
                )
            )
    return problems
