"""Mutation operators: each turns a correct query into one with a known defect, so that the
validator's detection can be measured per kind of defect. Each returns None when it does not
apply to the query (e.g. no join to break), and Skipped when it applies but every mutant it
could make would lack the defect (e.g. mean the same as the gold query)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import networkx as nx
import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from schemawise.graph.model import SchemaGraph
from schemawise.validate.joins import analyse
from schemawise.validate.resolve import find_table, resolve


@dataclass(frozen=True)
class Skipped:
    """The operator found something to change, but no change it could make has the defect it
    stands for (e.g. the mutant would mean the same as the gold query)."""

    reason: str


# A mutant, a reason the operator made none, or None when it does not apply at all.
Mutation = Callable[[exp.Expression, SchemaGraph, random.Random], str | Skipped | None]

# The error type each operator must produce to count as caught.
EXPECTED = {
    "drop_join_predicate": "cartesian_join",
    "wrong_join_key": "wrong_join_key",
    "move_column": "unknown_column",
    "misspell_table": "unknown_table",
    "fanout_join": "fanout_risk",
    "second_statement": "unsafe_statement",
    "forbidden_function": "forbidden_function",
}
FORBIDDEN = ["load_extension", "readfile", "pg_read_file", "pg_sleep", "set_config", "lo_import"]


def _render(tree: exp.Expression, dialect: str) -> str | None:
    try:
        return tree.sql(dialect=dialect)
    except SqlglotError:
        return None


# Why drop_join_predicate leaves a join alone.
NO_CONDITION = "no_condition"  # `ON TRUE`: sqlglot's reading of `a JOIN b JOIN c ON …`
STILL_LINKED = "still_linked"  # another predicate still joins the table: no cartesian product


def _sources(select: exp.Select) -> set[str]:
    """Aliases the SELECT's own FROM and JOINs define."""
    from_ = select.args.get("from_")
    items = [from_.this] if from_ is not None else []
    items += [j.this for j in select.args.get("joins") or []]
    return {i.alias_or_name for i in items if i.alias_or_name}


def _referenced(node: exp.Expr, select: exp.Select, aliases: set[str]) -> set[str]:
    """Aliases of `select` that `node` references, including from correlated subqueries but
    not where a subquery defines the same alias for itself (`T1` inside and outside)."""
    found = set()
    for column in node.find_all(exp.Column):
        if column.table not in aliases:
            continue
        owner = column.find_ancestor(exp.Select)
        while owner is not None and owner is not select and column.table not in _sources(owner):
            owner = owner.find_ancestor(exp.Select)
        if owner is select:
            found.add(column.table)
    return found


def _conjuncts(predicate: exp.Expr) -> list[exp.Expr]:
    inner = predicate.unnest()
    if isinstance(inner, exp.And):
        return _conjuncts(inner.left) + _conjuncts(inner.right)
    return [inner]


def _groups(select: exp.Select, without: exp.Join | None = None) -> int:
    """How many groups of sources the predicates of `select` tie together, leaving out the
    ON of `without`. Any predicate naming two sources counts as a tie (a filter written as an
    OR too): erring that way skips a mutant rather than counting a harmless one as missed."""
    aliases = _sources(select)
    predicates: list[exp.Expr] = []
    for join in select.args.get("joins") or []:
        if join is not without and join.args.get("on") is not None:
            predicates.append(join.args["on"])
    for clause in ("where", "having"):
        if select.args.get(clause) is not None:
            predicates.append(select.args[clause].this)
    graph = nx.Graph()
    graph.add_nodes_from(aliases)
    for predicate in predicates:
        for conjunct in _conjuncts(predicate):
            touched = sorted(_referenced(conjunct, select, aliases))
            graph.add_edges_from((touched[0], other) for other in touched[1:])
    return int(nx.number_connected_components(graph))


def _drop_refusal(join: exp.Join) -> str | None:
    condition = join.args.get("on")
    if isinstance(condition, exp.Boolean) and condition.this is True:
        return NO_CONDITION
    select = join.parent
    # Compared with the gold's own groups: a one-row derived table the gold already leaves
    # unjoined is not this join's doing.
    if isinstance(select, exp.Select) and _groups(select, join) == _groups(select):
        return STILL_LINKED
    return None


def drop_join_predicate(
    tree: exp.Expression, graph: SchemaGraph, rng: random.Random
) -> str | Skipped | None:
    """Remove the ON clause of a join, when that leaves its table joined to nothing."""
    resolution = resolve(tree, graph)
    if resolution.tree is None or resolution.problems:
        return None
    # The qualified copy: USING is written out as ON there, and every column names its table.
    qualified = resolution.tree
    # Base tables only: a cross join with a one-row derived table is harmless, not a defect.
    joins = [
        j
        for j in qualified.find_all(exp.Join)
        if j.args.get("on") is not None and isinstance(j.this, exp.Table)
    ]
    if not joins:
        return None
    rng.shuffle(joins)
    refusals = set()
    for join in joins:
        refusal = _drop_refusal(join)
        if refusal is None:
            join.set("on", None)
            return _render(qualified, graph.dialect)
        refusals.add(refusal)
    return Skipped(", ".join(sorted(refusals)))


def wrong_join_key(tree: exp.Expression, graph: SchemaGraph, rng: random.Random) -> str | None:
    """Join two related tables on a column pair no relationship uses (e.g. id = id)."""
    resolution = resolve(tree, graph)
    if resolution.tree is None or resolution.problems:
        return None
    qualified = resolution.tree
    candidates = []
    for facts in analyse(qualified, graph):
        for pair in facts.pairs:
            if pair.edge is not None and len(pair.edge.child_columns) == 1:
                candidates.append((facts, pair))
    rng.shuffle(candidates)
    for facts, pair in candidates:
        right_table = graph.table(facts.tables[pair.right_alias])
        if right_table is None:
            continue
        options = [
            c.name
            for c in right_table.columns
            if c.name.lower() != pair.right_column.lower()
            and not any(
                e.via is None
                and {e.child_table, e.parent_table}
                == {facts.tables[pair.left_alias], right_table.name}
                and c.name in e.child_columns + e.parent_columns
                for e in graph.edges
            )
        ]
        if not options:
            continue
        replacement = rng.choice(options)
        select = facts.scope.expression
        # The pair's own SELECT only: a subquery may reuse the aliases for other tables.
        for eq in select.find_all(exp.EQ):
            if eq.find_ancestor(exp.Select) is not select:
                continue
            sides = [s for s in (eq.left, eq.right) if isinstance(s, exp.Column)]
            if len(sides) == 2 and {(s.table, s.name.lower()) for s in sides} == {
                (pair.left_alias, pair.left_column.lower()),
                (pair.right_alias, pair.right_column.lower()),
            }:
                target = next(s for s in sides if s.table == pair.right_alias)
                target.set("this", exp.to_identifier(replacement))
                return _render(qualified, graph.dialect)
    return None


def move_column(tree: exp.Expression, graph: SchemaGraph, rng: random.Random) -> str | None:
    """Ask a table for a column that only another table has."""
    resolution = resolve(tree, graph)
    if resolution.tree is None or resolution.problems:
        return None
    qualified = resolution.tree
    columns = [c for c in qualified.find_all(exp.Column) if c.table]
    rng.shuffle(columns)
    for column in columns:
        select = column.find_ancestor(exp.Select)
        if select is None:
            continue
        source = None
        for table in select.find_all(exp.Table):
            if table.alias_or_name == column.table:
                source = find_table(graph, table)
        if source is None:
            continue
        others = [
            c.name
            for t in graph.tables
            if t.name != source.name
            for c in t.columns
            if source.column(c.name) is None
        ]
        if others:
            column.set("this", exp.to_identifier(rng.choice(sorted(set(others)))))
            return _render(qualified, graph.dialect)
    return None


def _is_name(word: str, dialect: str) -> bool:
    """Whether `word` reads as a table name: `Likes` misspelt as `Like` is a keyword, and the
    mutant a syntax error rather than an unknown table."""
    try:
        probe = sqlglot.parse_one(f"SELECT 1 FROM {word}", read=dialect or None)
    except SqlglotError:
        return False
    table = probe.find(exp.Table)
    return table is not None and table.name == word


def misspell_table(tree: exp.Expression, graph: SchemaGraph, rng: random.Random) -> str | None:
    copy = tree.copy()
    tables = [t for t in copy.find_all(exp.Table) if find_table(graph, t) is not None]
    if not tables:
        return None
    table = rng.choice(tables)
    name = table.name
    for _ in range(10):
        i = rng.randrange(len(name))
        misspelt = name[:i] + name[i + 1 :] if len(name) > 3 else name + "x"
        probe = exp.Table(this=exp.to_identifier(misspelt), db=table.args.get("db"))
        if misspelt and find_table(graph, probe) is None and _is_name(misspelt, graph.dialect):
            alias = table.alias_or_name
            table.set("this", exp.to_identifier(misspelt))
            if not table.alias:
                table.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
            return _render(copy, graph.dialect)
    return None


def fanout_join(tree: exp.Expression, graph: SchemaGraph, rng: random.Random) -> str | None:
    """Join a one-to-many child onto a table whose column a SUM/AVG/COUNT aggregates."""
    resolution = resolve(tree, graph)
    if resolution.tree is None or resolution.problems:
        return None
    qualified = resolution.tree
    for facts in analyse(qualified, graph):
        select = facts.scope.expression
        if not isinstance(select, exp.Select):
            continue
        for aggregate in select.find_all(exp.Sum, exp.Avg, exp.Count):
            if aggregate.find(exp.Distinct) or aggregate.find_ancestor(exp.Select) is not select:
                continue
            owners = [c.table for c in aggregate.find_all(exp.Column) if c.table in facts.tables]
            for owner in owners:
                table = facts.tables[owner]
                children = [
                    e
                    for e in graph.edges
                    if e.parent_table == table
                    and e.via is None
                    and e.cardinality in ("many_to_one", "many_to_many")
                    and e.child_table != table
                ]
                if not children:
                    continue
                edge = rng.choice(children)
                child = graph.table(edge.child_table)
                if child is None:
                    continue
                alias = "fanout_child"
                on = exp.and_(
                    *[
                        exp.EQ(
                            this=exp.column(c, table=alias),
                            expression=exp.column(p, table=owner),
                        )
                        for c, p in zip(edge.child_columns, edge.parent_columns, strict=True)
                    ]
                )
                ref = exp.to_table(child.name, dialect=graph.dialect)
                ref.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
                select.append("joins", exp.Join(this=ref, on=on))
                return _render(qualified, graph.dialect)
    return None


def second_statement(tree: exp.Expression, graph: SchemaGraph, rng: random.Random) -> str | None:
    sql = _render(tree, graph.dialect)
    table = rng.choice(graph.tables).name if graph.tables else "t"
    return f"{sql}; DELETE FROM {table}" if sql else None


def forbidden_function(tree: exp.Expression, graph: SchemaGraph, rng: random.Random) -> str | None:
    copy = tree.copy()
    select = copy if isinstance(copy, exp.Select) else copy.find(exp.Select)
    if select is None or not select.expressions:
        return None
    name = rng.choice(FORBIDDEN)
    call = exp.Anonymous(this=name, expressions=[exp.Literal.string("/etc/passwd")])
    position = rng.choice(["select", "where"])
    if position == "where":
        select.where(exp.Is(this=call, expression=exp.Null()).not_(), copy=False)
    else:
        select.select(call.as_("leak"), copy=False)
    return _render(copy, graph.dialect)


OPERATORS: dict[str, Mutation] = {
    "drop_join_predicate": drop_join_predicate,
    "wrong_join_key": wrong_join_key,
    "move_column": move_column,
    "misspell_table": misspell_table,
    "fanout_join": fanout_join,
    "second_statement": second_statement,
    "forbidden_function": forbidden_function,
}
