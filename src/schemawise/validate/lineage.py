"""Where a column of a CTE or a derived table comes from: the base-table columns behind it, in
the SELECT that makes it, as long as that SELECT hands its joined rows on as they are.

A fan-out need not sit in the SELECT that aggregates: `WITH j AS (SELECT o.amt FROM orders o
JOIN order_items oi …) SELECT SUM(amt) FROM j` repeats each order once per item inside `j`
and sums the repeats outside it. Following `amt` back into `j` finds `orders` joined to its
many side there. A SELECT that groups, aggregates or is DISTINCT hands on new rows, not
repeats, so lineage stops at it (and so does a UNION, whose rows come from several SELECTs).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp
from sqlglot.optimizer.scope import Scope

from schemawise.validate.joins import ScopeJoins

# Derived tables nested deeper than this are not followed (each level is one more SELECT).
_MAX_DEPTH = 8


@dataclass(frozen=True)
class Origin:
    """A base-table column behind a derived column: `alias.column` in the SELECT `facts`
    describes, reached through the derived sources named in `through` (outermost first)."""

    facts: ScopeJoins
    alias: str
    column: str
    through: tuple[str, ...]


def facts_by_select(all_facts: list[ScopeJoins]) -> dict[int, ScopeJoins]:
    """Each analysed SELECT's facts, by the identity of its expression."""
    return {id(f.scope.expression): f for f in all_facts}


def passes_rows_on(select: exp.Expr) -> bool:
    """Whether the SELECT's rows are its joined rows, one for one: no GROUP BY, no DISTINCT,
    no aggregate of its own (a window function keeps the rows, so it does not count)."""
    if not isinstance(select, exp.Select):
        return False
    if select.args.get("group") or select.args.get("distinct"):
        return False
    for projection in select.expressions:
        for node in projection.find_all(exp.AggFunc):
            if node.find_ancestor(exp.Select) is select and not node.find_ancestor(exp.Window):
                return False
    return True


def origins(
    facts: ScopeJoins,
    alias: str,
    column: str,
    by_select: dict[int, ScopeJoins],
    through: tuple[str, ...] = (),
) -> list[Origin]:
    """The base-table columns `alias.column` of this SELECT is made from, through derived
    sources that pass their rows on; a base table's column is its own origin."""
    if alias in facts.tables:
        return [Origin(facts, alias, column, through)]
    source = facts.scope.selected_sources.get(alias)
    if source is None or not isinstance(source[1], Scope) or len(through) >= _MAX_DEPTH:
        return []
    inner_select = source[1].expression
    inner = by_select.get(id(inner_select))
    if inner is None or not passes_rows_on(inner_select):
        return []
    projection = next(
        (p for p in inner_select.expressions if p.alias_or_name.lower() == column.lower()), None
    )
    if projection is None:
        return []
    found: list[Origin] = []
    for used in projection.find_all(exp.Column):
        if used.find_ancestor(exp.Select) is inner_select and used.table:
            found += origins(inner, used.table, used.name, by_select, (*through, alias))
    return found
