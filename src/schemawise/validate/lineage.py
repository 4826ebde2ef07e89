"""Where a column of a CTE or a derived table comes from: the base-table columns behind it, in
the SELECT that makes it, as long as that SELECT hands its joined rows on as they are.

A fan-out need not sit in the SELECT that aggregates: `WITH j AS (SELECT o.amt FROM orders o
JOIN order_items oi …) SELECT SUM(amt) FROM j` repeats each order once per item inside `j`
and sums the repeats outside it. Following `amt` back into `j` finds `orders` joined to its
many side there. A SELECT that groups, aggregates, is DISTINCT, or numbers its rows (a window
function, QUALIFY: the usual way to keep one row of each repeat) hands on other rows than its
joins made, so lineage stops at it (and so does a UNION, whose rows come from several SELECTs).
Only the columns a value is made of are followed, not those a CASE tests (`CASE WHEN o.status
= 's' THEN oi.quantity END` is a quantity).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.optimizer.scope import Scope

from schemawise.validate.joins import ScopeJoins

# Derived tables nested deeper than this are not followed (each level is one more SELECT).
_MAX_DEPTH = 8
# Lineage steps one check may take in all: a query of many wide CTEs, each column made of
# several of the one before, would otherwise be followed down every path (k^depth).
_MAX_STEPS = 2000


@dataclass(frozen=True)
class Origin:
    """A base-table column behind a derived column: `alias.column` in the SELECT `facts`
    describes, reached through the derived sources named in `through` (outermost first)."""

    facts: ScopeJoins
    alias: str
    column: str
    through: tuple[str, ...]


@dataclass
class Lineage:
    """Every analysed SELECT's facts, by the identity of its expression, and what was already
    followed (each derived column once per check)."""

    by_select: dict[int, ScopeJoins]
    _seen: dict[tuple[int, str, str], list[Origin]] = field(default_factory=dict)
    _steps: int = 0

    @classmethod
    def of(cls, all_facts: list[ScopeJoins]) -> Lineage:
        return cls({id(f.scope.expression): f for f in all_facts})

    def origins(
        self, facts: ScopeJoins, alias: str, column: str, through: tuple[str, ...] = ()
    ) -> list[Origin]:
        """The base-table columns `alias.column` of this SELECT is made from, through derived
        sources that pass their rows on; a base table's column is its own origin."""
        if alias in facts.tables:
            return [Origin(facts, alias, column, through)]
        slot = (id(facts), alias, column)
        if slot in self._seen:
            # The same derived column reached again: its origins, named by this path.
            return [Origin(o.facts, o.alias, o.column, (*through, *o.through[len(through):]))
                    for o in self._seen[slot]]  # fmt: skip
        self._seen[slot] = []  # a cycle (a recursive CTE) ends here
        self._steps += 1
        found = self._follow(facts, alias, column, through)
        self._seen[slot] = found
        return found

    def _follow(
        self, facts: ScopeJoins, alias: str, column: str, through: tuple[str, ...]
    ) -> list[Origin]:
        source = facts.scope.selected_sources.get(alias)
        if (
            source is None
            or not isinstance(source[1], Scope)
            or len(through) >= _MAX_DEPTH
            or self._steps > _MAX_STEPS
        ):
            return []
        inner_select = source[1].expression
        inner = self.by_select.get(id(inner_select))
        if inner is None or not isinstance(inner_select, exp.Select):
            return []
        if not passes_rows_on(inner_select):
            return []
        projection = _projection(inner_select, column)
        if projection is None:
            return []
        found: list[Origin] = []
        for used in value_columns(projection):
            if used.find_ancestor(exp.Select) is inner_select and used.table:
                found += self.origins(inner, used.table, used.name, (*through, alias))
        return found


def passes_rows_on(select: exp.Expr) -> bool:
    """Whether the SELECT's rows are its joined rows, one for one: no GROUP BY, DISTINCT,
    QUALIFY, aggregate or window function of its own."""
    if not isinstance(select, exp.Select):
        return False
    if any(select.args.get(part) for part in ("group", "distinct", "qualify")):
        return False
    for projection in select.expressions:
        for node in projection.find_all(exp.AggFunc, exp.Window):
            if node.find_ancestor(exp.Select) is select:
                return False
    return True


def value_columns(node: exp.Expr) -> list[exp.Column]:
    """The columns a value is made of, not those only a CASE's condition tests."""
    out = []
    for column in node.find_all(exp.Column):
        child: exp.Expr = column
        parent = column.parent
        while parent is not None and child is not node:
            if isinstance(parent, exp.If) and child is parent.this:
                break  # the condition of a WHEN
            child, parent = parent, parent.parent
        else:
            out.append(column)
    return out


def _projection(select: exp.Select, column: str) -> exp.Expr | None:
    """The output column of that name: as written, else the one whose name matches in any
    case when only one does (SQLite, and unquoted names folded by the dialect)."""
    outputs: list[exp.Expr] = list(select.expressions)
    exact = [p for p in outputs if p.alias_or_name == column]
    if exact:
        return exact[0]
    folded = [p for p in outputs if p.alias_or_name.lower() == column.lower()]
    return folded[0] if len(folded) == 1 else None
