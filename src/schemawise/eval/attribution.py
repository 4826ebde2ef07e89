"""Per-stage attribution: for a prediction scored wrong, the first stage of the pipeline where
it parts from the gold query, read from the two ASTs (sqlglot). A heuristic: it names where to
look, not a proof.

The stages, tested in this order (`ATTRIBUTIONS`); the first that differs is the answer:

1. ``invalid_sql`` — no SQL, SQL that does not parse, a failed static check, or SQL that did
   not execute.
2. ``wrong_tables`` — the context pack missed a gold table (retrieval), or the query reads
   another set of tables than the gold.
3. ``wrong_join`` — the same tables, joined on other column pairs (an equality between two
   tables' columns, in ON or WHERE).
4. ``wrong_columns`` — other columns read anywhere: selected, filtered on (a dropped or added
   filter on another column lands here), grouped or ordered by.
5. ``wrong_aggregation`` — other aggregate functions, DISTINCT, GROUP BY columns or HAVING.
6. ``wrong_value`` — the same shape, but the literals of filters differ (``'France'`` for
   ``'france'``, ``> 30`` for ``> 20``); LIMIT, OFFSET and ORDER BY positions are not filters.
7. ``wrong_result`` — none of the above differs (an operator, ORDER BY direction, LIMIT, …).

With a schema graph both queries are qualified first (`validate.resolve`), so a column is known
by its table even where the SQL leaves it unqualified; when either does not resolve, both are
compared by names as written, with aliases mapped to their tables. With several gold queries,
the one the prediction follows furthest (the latest stage) is the one it is measured against.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from schemawise.bench.linking import gold_links
from schemawise.eval.golden import ColumnRef, parse_column
from schemawise.graph.model import SchemaGraph
from schemawise.validate.joins import analyse
from schemawise.validate.resolve import resolve

ATTRIBUTIONS = (
    "invalid_sql",
    "wrong_tables",
    "wrong_join",
    "wrong_columns",
    "wrong_aggregation",
    "wrong_value",
    "wrong_result",
)
JoinKey = frozenset[ColumnRef]


@dataclass(frozen=True)
class Shape:
    """What attribution compares of one query."""

    tables: frozenset[str]
    columns: frozenset[ColumnRef]
    join_keys: frozenset[JoinKey]
    aggregation: tuple[str, ...]
    literals: tuple[str, ...]


def parse(sql: str, dialect: str = "sqlite") -> exp.Expression | None:
    """One statement, or None when the text does not parse as exactly one."""
    try:
        statements = sqlglot.parse(sql, read=dialect)
    except SqlglotError:
        return None
    found = [s for s in statements if s is not None]
    if len(found) != 1 or not isinstance(found[0], exp.Expression):
        return None
    return found[0]


def _literal_text(literal: exp.Literal) -> str:
    if literal.is_string:
        return f"s:{literal.this}"
    try:
        return f"n:{float(literal.this)!r}"  # 1 and 1.0 are the same value
    except ValueError:
        return f"n:{literal.this}"


def _filter_literals(tree: exp.Expression) -> tuple[str, ...]:
    found = []
    for literal in tree.find_all(exp.Literal):
        if literal.find_ancestor(exp.Limit, exp.Offset, exp.Order, exp.Fetch) is None:
            found.append(_literal_text(literal))
    return tuple(sorted(found))


def _aggregation(tree: exp.Expression) -> tuple[str, ...]:
    """Aggregate functions (with DISTINCT), GROUP BY column names, HAVING and SELECT
    DISTINCT, as one sorted signature."""
    parts = []
    for function in tree.find_all(exp.AggFunc):
        distinct = isinstance(function.this, exp.Distinct)
        parts.append(f"agg:{function.key}{':distinct' if distinct else ''}")
    for group in tree.find_all(exp.Group):
        parts += [f"group:{c.name.lower()}" for c in group.find_all(exp.Column)]
    for select in tree.find_all(exp.Select):
        if select.args.get("distinct") is not None:
            parts.append("select_distinct")
        if select.args.get("having") is not None:
            parts.append("having")
    return tuple(sorted(parts))


def _named_shape(tree: exp.Expression) -> Shape:
    """By names as written: aliases mapped to their tables, unqualified columns with ""."""
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    tables = [t for t in tree.find_all(exp.Table) if t.name.lower() not in ctes]
    alias_of = {t.alias_or_name.lower(): t.name.lower() for t in tables}

    def ref(column: exp.Column) -> ColumnRef:
        qualifier = column.table.lower()
        return alias_of.get(qualifier, qualifier), column.name.lower()

    keys = set()
    for eq in tree.find_all(exp.EQ):
        left, right = eq.left, eq.right
        if (
            isinstance(left, exp.Column)
            and isinstance(right, exp.Column)
            and left.table
            and right.table
            and left.table.lower() != right.table.lower()
        ):
            keys.add(frozenset({ref(left), ref(right)}))
    return Shape(
        tables=frozenset(t.name.lower() for t in tables),
        columns=frozenset(ref(c) for c in tree.find_all(exp.Column) if c.name != "*"),
        join_keys=frozenset(keys),
        aggregation=_aggregation(tree),
        literals=_filter_literals(tree),
    )


def _resolved_shape(sql: str, tree: exp.Expression, graph: SchemaGraph) -> Shape | None:
    """Qualified against the graph; None when the query does not resolve cleanly."""
    links = gold_links(sql, graph)
    if links is None:
        return None
    tables, columns = links
    resolution = resolve(tree, graph)
    if resolution.tree is None:
        return None
    keys = set()
    for facts in analyse(resolution.tree, graph):
        for pair in facts.pairs:
            left = (facts.tables[pair.left_alias].lower(), pair.left_column.lower())
            right = (facts.tables[pair.right_alias].lower(), pair.right_column.lower())
            keys.add(frozenset({left, right}))
    return Shape(
        tables=frozenset(tables),
        columns=frozenset(columns),
        join_keys=frozenset(keys),
        aggregation=_aggregation(resolution.tree),
        literals=_filter_literals(resolution.tree),
    )


def shapes(
    sqls: Sequence[str], graph: SchemaGraph | None, dialect: str = "sqlite"
) -> list[Shape] | None:
    """The shapes of several queries, all read the same way (resolved when every one
    resolves, by names otherwise); None when one does not parse."""
    trees = [parse(sql, dialect) for sql in sqls]
    if any(t is None for t in trees):
        return None
    parsed = [t for t in trees if t is not None]
    if graph is not None:
        pairs = zip(sqls, parsed, strict=True)
        resolved = [_resolved_shape(sql, tree, graph) for sql, tree in pairs]
        if all(s is not None for s in resolved):
            return [s for s in resolved if s is not None]
    return [_named_shape(tree) for tree in parsed]


def parse_join_key(text: str) -> JoinKey:
    """`a.x = b.y` from a golden item."""
    left, _, right = text.partition("=")
    return frozenset({parse_column(left), parse_column(right)})


@dataclass(frozen=True)
class GoldFacts:
    """What a golden item states about its gold query, overriding what is read from the SQL."""

    tables: frozenset[str] | None = None
    columns: frozenset[ColumnRef] | None = None
    join_keys: frozenset[JoinKey] | None = None


def _stage(predicted: Shape, gold: Shape, facts: GoldFacts) -> str:
    gold_tables = facts.tables if facts.tables is not None else gold.tables
    if predicted.tables != gold_tables:
        return "wrong_tables"
    gold_keys = facts.join_keys if facts.join_keys is not None else gold.join_keys
    if predicted.join_keys != gold_keys:
        return "wrong_join"
    gold_columns = facts.columns if facts.columns is not None else gold.columns
    if predicted.columns != gold_columns:
        return "wrong_columns"
    if predicted.aggregation != gold.aggregation:
        return "wrong_aggregation"
    if predicted.literals != gold.literals:
        return "wrong_value"
    return "wrong_result"


def attribute(
    predicted_sql: str | None,
    golds: Sequence[str],
    graph: SchemaGraph | None,
    *,
    executes: bool,
    check_ok: bool | None = None,
    pack_tables: Collection[str] | None = None,
    gold_tables: Collection[str] | None = None,
    facts: GoldFacts | None = None,
    dialect: str = "sqlite",
) -> str:
    """The stage a wrong prediction is attributed to (see the module's docstring).

    `gold_tables`: the tables the gold needs, for the pack test (lower case); `facts`: what
    the golden item states, overriding what is read from the gold SQL."""
    if predicted_sql is None or check_ok is False or not executes:
        return "invalid_sql"
    if parse(predicted_sql, dialect) is None:
        return "invalid_sql"
    if pack_tables is not None and gold_tables is not None:
        kept = {t.lower() for t in pack_tables}
        if not {t.lower() for t in gold_tables} <= kept:
            return "wrong_tables"
    read = shapes([predicted_sql, *golds], graph, dialect)
    if read is None:  # a gold query that does not parse: nothing to compare with
        return "wrong_result"
    predicted, gold_shapes = read[0], read[1:]
    stages = [_stage(predicted, gold, facts or GoldFacts()) for gold in gold_shapes]
    return max(stages, key=ATTRIBUTIONS.index)
