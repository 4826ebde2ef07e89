"""Fan-out: aggregates over rows that a one-to-many join repeats."""

from __future__ import annotations

from collections import defaultdict

from sqlglot import exp

from schemawise.graph.model import SchemaGraph
from schemawise.validate.joins import JoinPair, ScopeJoins
from schemawise.validate.problems import SqlProblem

_RISKY = (exp.Sum, exp.Avg, exp.Count)


def _own_aggregates(select: exp.Select) -> list[exp.AggFunc]:
    """Aggregates of this SELECT, not of its subqueries."""
    found = []
    for part in [*select.expressions, select.args.get("having"), select.args.get("order")]:
        if part is None:
            continue
        for node in part.find_all(exp.AggFunc):
            if node.find_ancestor(exp.Select) is select:
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
    grouped = {(c.table, c.name.lower()) for c in group.find_all(exp.Column)}
    out = set()
    for alias, name in facts.tables.items():
        table = graph.table(name)
        key = [k.lower() for k in table.primary_key] if table else []
        if key and all((alias, k) in grouped for k in key):
            out.add(alias)
    return out


def fanout_problems(facts: ScopeJoins, graph: SchemaGraph) -> list[SqlProblem]:
    select = facts.scope.expression
    if not isinstance(select, exp.Select) or len(facts.tables) < 2:
        return []
    adjacency = _adjacency(facts)
    grouped = _grouped_keys(select, facts, graph)
    problems = []
    for aggregate in _own_aggregates(select):
        if not isinstance(aggregate, _RISKY) or aggregate.find(exp.Distinct):
            continue
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


def _problem(
    aggregate: exp.AggFunc, facts: ScopeJoins, owner: str, source: str, target: str, pair: JoinPair
) -> SqlProblem:
    edge = pair.edge
    assert edge is not None
    owner_table, via, other = facts.tables[owner], facts.tables[source], facts.tables[target]
    # The repeating side is `other`, whichever table the join to it starts from: aggregated
    # first by the column it joins on, it holds one row per row it joins (pre-aggregating the
    # summed table instead leaves the repetition: order_items × refunds still doubles).
    column = pair.right_column if pair.left_alias == source else pair.left_column
    hint = (
        f"Aggregate {other} by {other}.{column} in a CTE (WITH x AS (SELECT {column}, SUM(…) "
        f"FROM {other} GROUP BY {column})) and join that in its place, or compute the "
        f"{aggregate.key.upper()} over {owner_table} without joining {other}; COUNT(DISTINCT …), "
        "MIN and MAX are safe."
    )
    return SqlProblem.of(
        "fanout_risk",
        f"{aggregate.sql()} aggregates rows of {owner_table} that the join from {via} to "
        f"{other} repeats ({edge.describe()} is {edge.cardinality.replace('_', '-')}): each "
        f"{owner_table} row is counted once per matching {other} row.",
        hint,
        aggregate=aggregate.sql(),
        # SUM and AVG over repeated rows are wrong whatever the data; a COUNT may be meant.
        certain=isinstance(aggregate, exp.Sum | exp.Avg),
        table=owner_table,
        multiplied_by=other,
        edge=f"{via} → {other}",
        join=edge.describe(),
    )
