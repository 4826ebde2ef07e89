"""Orphans: an inner join over a reference whose child values are not all in the parent drops
the child's rows, and a count or a sum over them comes out short with nothing to say so.

The share comes from the graph (`Edge.evidence.inclusion`, measured on distinct values when
the graph was extracted with data checks); a query that keeps the rows with an outer join is
not warned.
"""

from __future__ import annotations

from sqlglot import exp

from schemawise.graph.paths import orphan_share, orphan_values
from schemawise.validate.joins import ScopeJoins
from schemawise.validate.problems import SqlProblem


def _outer_joined(select: exp.Expr) -> set[str]:
    """Aliases this SELECT joins with LEFT, RIGHT or FULL, and the sources such a join keeps
    (a RIGHT or FULL join keeps the rows of what came before it)."""
    if not isinstance(select, exp.Select):
        return set()
    outer: set[str] = set()
    from_ = select.args.get("from_")
    before = [from_.this.alias_or_name] if from_ is not None else []
    for join in select.args.get("joins") or []:
        side = (join.side or "").upper()
        name = join.this.alias_or_name
        if side in ("LEFT", "FULL"):
            outer.add(name)
        if side in ("RIGHT", "FULL"):
            outer.update(before)
        before.append(name)
    return outer


def orphan_problems(facts: ScopeJoins) -> list[SqlProblem]:
    """A warning for each inner join over an edge with orphans (never an error: which rows a
    question wants is the question's, and the warning says how to keep them)."""
    outer = _outer_joined(facts.scope.expression)
    problems: list[SqlProblem] = []
    seen: set[str] = set()
    for pair in facts.pairs:
        edge = pair.edge
        inclusion = edge.evidence.inclusion if edge is not None else None
        if edge is None or inclusion is None or inclusion >= 1.0:
            continue
        if pair.left_alias in outer or pair.right_alias in outer:
            continue
        described = edge.describe()
        if described in seen:
            continue
        seen.add(described)
        child, parent = edge.child_table, edge.parent_table
        values = orphan_values([f"{child}.{c}" for c in edge.child_columns])
        if inclusion == 0.0:
            message = (
                f"None of {values} is found in {parent} ({described}): this join returns no rows."
            )
            hint = "Compare the values on both sides (spaces, case, types); join on a cleaned form."
        else:
            message = (
                f"{orphan_share(inclusion)} of {values} have no {parent} row ({described}): "
                f"this inner join drops those {child} rows."
            )
            hint = (
                f"{child} LEFT JOIN {parent} keeps them, when the question counts every {child} "
                "row."
            )
        problems.append(
            SqlProblem.of("orphan_join", message, hint, join=described, inclusion=inclusion)
        )
    return problems
