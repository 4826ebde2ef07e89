"""Fan-out: aggregates over rows that a one-to-many join repeats."""

from __future__ import annotations

from collections import defaultdict

from sqlglot import exp

from schemawise.graph.model import SchemaGraph
from schemawise.validate.joins import JoinPair, ScopeJoins
from schemawise.validate.lineage import Lineage
from schemawise.validate.problems import SqlProblem

_RISKY = (exp.Sum, exp.Avg, exp.Count)


def _is_risky(node: exp.Expr, dialect: str) -> bool:
    """SUM, AVG and COUNT add up repeats; so does SQLite's TOTAL (a SUM that returns 0.0 on
    no rows), which sqlglot reads as an unknown function."""
    if isinstance(node, exp.Anonymous):
        return dialect == "sqlite" and node.name.lower() == "total"
    return isinstance(node, _RISKY)


def _own_aggregates(select: exp.Select, dialect: str) -> list[exp.Func]:
    """Risky aggregates of this SELECT, not of its subqueries, not over DISTINCT values."""
    found: list[exp.Func] = []
    for part in [*select.expressions, select.args.get("having"), select.args.get("order")]:
        if part is None:
            continue
        for node in part.find_all(exp.AggFunc, exp.Anonymous):
            if (
                node.find_ancestor(exp.Select) is select
                and _is_risky(node, dialect)
                and not node.find(exp.Distinct)
            ):
                found.append(node)
    return found


def _adjacency(facts: ScopeJoins) -> dict[str, list[tuple[str, JoinPair, bool]]]:
    """alias → [(neighbour, pair, multiplies)]: `multiplies` when stepping to the neighbour
    repeats this alias's rows (the neighbour is the many side)."""
    adjacency: dict[str, list[tuple[str, JoinPair, bool]]] = defaultdict(list)
    for pair in facts.pairs:
        if pair.edge is None:
            continue
        child = pair.left_alias if pair.child_is_left else pair.right_alias
        parent = pair.right_alias if pair.child_is_left else pair.left_alias
        many_to_many = pair.edge.cardinality == "many_to_many"
        one_to_one = pair.edge.cardinality == "one_to_one"
        adjacency[parent].append((child, pair, not one_to_one))
        adjacency[child].append((parent, pair, many_to_many))
    return adjacency


def multiplying_step(
    owner: str, adjacency: dict[str, list[tuple[str, JoinPair, bool]]], grouped: set[str]
) -> tuple[str, str, JoinPair] | None:
    """The first join, walking out from `owner`, that repeats its rows: (from, to, pair).

    Many-to-one steps keep the grain, so the walk goes on through them; a step to a many side
    multiplies every row reached so far, the owner's included.
    """
    seen = {owner}
    frontier = [owner]
    while frontier:
        following = []
        for alias in frontier:
            for neighbour, pair, multiplies in adjacency.get(alias, []):
                if neighbour in seen:
                    continue
                if multiplies and neighbour not in grouped:
                    return alias, neighbour, pair
                seen.add(neighbour)
                following.append(neighbour)
        frontier = following
    return None


def _grouped_keys(select: exp.Select, facts: ScopeJoins, graph: SchemaGraph) -> set[str]:
    """Aliases whose primary key is in GROUP BY: each group holds one of their rows."""
    group = select.args.get("group")
    if not group:
        return set()
    grouped = {(id(facts), c.table, c.name.lower()) for c in group.find_all(exp.Column)}
    return _keys_grouped(facts, grouped, graph)


def fanout_problems(
    facts: ScopeJoins, graph: SchemaGraph, lineage: Lineage | None = None
) -> list[SqlProblem]:
    """Aggregates of this SELECT over rows its joins repeat, or (with `lineage`, every
    SELECT's facts) rows repeated by the joins of a CTE or derived table it reads."""
    select = facts.scope.expression
    if not isinstance(select, exp.Select):
        return []
    aggregates = _own_aggregates(select, graph.dialect)
    problems = _direct_problems(facts, graph, select, aggregates) if len(facts.tables) > 1 else []
    if lineage is not None:
        flagged = {p.model_dump().get("aggregate") for p in problems}
        unflagged = [a for a in aggregates if a.sql() not in flagged]
        problems += _derived_problems(facts, graph, select, unflagged, lineage)
    return problems


def _derived_problems(
    facts: ScopeJoins,
    graph: SchemaGraph,
    select: exp.Select,
    aggregates: list[exp.Func],
    lineage: Lineage,
) -> list[SqlProblem]:
    """Aggregates over a CTE's or derived table's columns whose base rows its own joins repeat.
    As for a direct aggregate, a step to a many side is no repeat when this SELECT groups by
    that side's key (each group then holds one of its rows)."""
    grouped = _grouped_origins(select, facts, lineage)
    problems = []
    for aggregate in aggregates:
        derived = [c for c in aggregate.find_all(exp.Column) if c.table in facts.others]
        for column in derived:
            step = next(
                (
                    (origin, found)
                    for origin in lineage.origins(facts, column.table, column.name)
                    if (
                        found := multiplying_step(
                            origin.alias,
                            _adjacency(origin.facts),
                            _keys_grouped(origin.facts, grouped, graph),
                        )
                    )
                ),
                None,
            )
            if step is not None:
                origin, (source, target, pair) = step
                problems.append(
                    _problem(aggregate, origin.facts, origin.alias, source, target, pair,
                             through=origin.through[-1])
                )  # fmt: skip
                break
    return problems


def _grouped_origins(
    select: exp.Select, facts: ScopeJoins, lineage: Lineage
) -> set[tuple[int, str, str]]:
    """The base columns behind this SELECT's GROUP BY columns: (their SELECT, alias, column)."""
    group = select.args.get("group")
    if not group:
        return set()
    return {
        (id(o.facts), o.alias, o.column.lower())
        for c in group.find_all(exp.Column)
        for o in lineage.origins(facts, c.table, c.name)
    }


def _keys_grouped(
    inner: ScopeJoins, grouped: set[tuple[int, str, str]], graph: SchemaGraph
) -> set[str]:
    """Aliases of `inner` whose whole primary key the outer GROUP BY holds."""
    out = set()
    for alias, name in inner.tables.items():
        table = graph.table(name)
        key = [k.lower() for k in table.primary_key] if table else []
        if key and all((id(inner), alias, k) in grouped for k in key):
            out.add(alias)
    return out


def _direct_problems(
    facts: ScopeJoins, graph: SchemaGraph, select: exp.Select, aggregates: list[exp.Func]
) -> list[SqlProblem]:
    adjacency = _adjacency(facts)
    grouped = _grouped_keys(select, facts, graph)
    problems = []
    for aggregate in aggregates:
        columns = [c for c in aggregate.find_all(exp.Column) if c.table in facts.tables]
        if columns:
            owners = sorted({c.table for c in columns})
        elif isinstance(aggregate, exp.Count):
            # COUNT(*) counts joined rows: wrong only when two many-sides multiply each other,
            # i.e. when some alias reaches two different many-sides.
            owners = [
                a
                for a, steps in adjacency.items()
                if len({n for n, _, m in steps if m and n not in grouped}) > 1
            ]
        else:
            continue
        for owner in owners:
            step = multiplying_step(owner, adjacency, grouped)
            if step is None:
                continue
            source, target, pair = step
            if isinstance(aggregate, exp.Count) and not columns:
                # The first many-side is the grain being counted; the culprit is another one.
                others = [n for n, _, m in adjacency[owner] if m and n != target]
                target = others[0] if others else target
            problems.append(_problem(aggregate, facts, owner, source, target, pair))
            break
    return problems


def _function_name(aggregate: exp.Func) -> str:
    return (aggregate.name if isinstance(aggregate, exp.Anonymous) else aggregate.key).upper()


def _problem(
    aggregate: exp.Func,
    facts: ScopeJoins,
    owner: str,
    source: str,
    target: str,
    pair: JoinPair,
    through: str | None = None,  # the CTE or derived table whose joins repeat the rows
) -> SqlProblem:
    edge = pair.edge
    assert edge is not None
    owner_table, via, other = facts.tables[owner], facts.tables[source], facts.tables[target]
    # The repeating side is `other`, whichever table the join to it starts from: aggregated
    # first by the column it joins on, it holds one row per row it joins (pre-aggregating the
    # summed table instead leaves the repetition: order_items × refunds still doubles).
    column = pair.right_column if pair.left_alias == source else pair.left_column
    inside = f" inside {through}" if through else ""
    hint = (
        f"Aggregate {other} by {other}.{column} in a CTE (WITH x AS (SELECT {column}, SUM(…) "
        f"FROM {other} GROUP BY {column})) and join that in its place{inside}, or compute the "
        f"{_function_name(aggregate)} over {owner_table} without joining {other}; "
        "COUNT(DISTINCT …), MIN and MAX are safe."
    )
    return SqlProblem.of(
        "fanout_risk",
        f"{aggregate.sql()} aggregates rows of {owner_table} that the join from {via} to "
        f"{other}{inside} repeats ({edge.describe()} is "
        f"{edge.cardinality.replace('_', '-')}): each {owner_table} row is counted once per "
        f"matching {other} row.",
        hint,
        aggregate=aggregate.sql(),
        # SUM, AVG and TOTAL over repeated rows are wrong whatever the data; a COUNT may be
        # meant.
        certain=not isinstance(aggregate, exp.Count),
        table=owner_table,
        multiplied_by=other,
        edge=f"{via} → {other}",
        join=edge.describe(),
        **({"through": through} if through else {}),
    )
