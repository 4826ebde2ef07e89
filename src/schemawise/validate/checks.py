"""Join checks against the graph's edges: wrong keys, unknown joins, cartesian products."""

from __future__ import annotations

import networkx as nx

from schemawise.graph.model import SchemaGraph
from schemawise.validate.joins import ScopeJoins, edges_between, sibling_edges
from schemawise.validate.problems import SqlProblem


def _condition(edge_child: str, child_cols: list[str], parent: str, parent_cols: list[str]) -> str:
    return " AND ".join(
        f"{edge_child}.{c} = {parent}.{p}" for c, p in zip(child_cols, parent_cols, strict=True)
    )


def join_problems(
    facts: ScopeJoins, graph: SchemaGraph
) -> tuple[list[SqlProblem], list[SqlProblem]]:
    """(errors, warnings) for the equality joins of one SELECT."""
    errors: list[SqlProblem] = []
    warnings: list[SqlProblem] = []
    # Aliases, not tables: a table joined twice (airports as origin and destination) may be
    # right once and wrong the second time.
    matched = {frozenset((p.left_alias, p.right_alias)) for p in facts.pairs if p.edge is not None}
    for pair in facts.pairs:
        if pair.edge is not None:
            continue
        left, right = facts.tables[pair.left_alias], facts.tables[pair.right_alias]
        written = f"{pair.left_alias}.{pair.left_column} = {pair.right_alias}.{pair.right_column}"
        direct = edges_between(graph, left, right)
        known = direct + sibling_edges(graph, left, right)
        # A column that is itself a key of a relationship between these two tables, compared
        # with the wrong partner (`eye_colour_id = colour.colour`), is wrong even when another
        # predicate joins the pair correctly.
        involved = {c.lower() for e in known for c in e.child_columns + e.parent_columns}
        misused = bool({pair.left_column.lower(), pair.right_column.lower()} & involved)
        if known and (frozenset((pair.left_alias, pair.right_alias)) not in matched or misused):
            # Suggest the direct relationships when there are any: a join through a shared
            # parent (Customer.SupportRepId = Employee.ReportsTo, both naming an employee) is
            # possible but rarely what was meant.
            keys = [
                _condition(e.child_table, e.child_columns, e.parent_table, e.parent_columns)
                for e in (direct or known)
            ]
            errors.append(
                SqlProblem.of(
                    "wrong_join_key",
                    f"{written} joins {left} and {right} on columns no relationship uses.",
                    f"Join on {' or '.join(keys)}.",
                    left=left,
                    right=right,
                    expected=keys,
                )
            )
        elif not known:
            around = sorted(
                {
                    f"{e.child_table} → {e.parent_table}"
                    for e in graph.edges
                    if e.via is None and {e.child_table, e.parent_table} & {left, right}
                }
            )[:8]
            warnings.append(
                SqlProblem.of(
                    "unknown_join",
                    f"{written}: no known relationship between {left} and {right}.",
                    "Check the join keys; known edges of these tables: "
                    + (", ".join(around) or "none"),
                    left=left,
                    right=right,
                )
            )
    return errors, warnings


def cartesian_problems(
    facts: ScopeJoins, *, explicit_cross_join: bool = False
) -> tuple[list[SqlProblem], list[SqlProblem]]:
    """A FROM whose sources no predicate connects multiplies them all: refuse it, unless
    a disconnected source is one row (a scalar aggregate) or the query says CROSS JOIN.

    sqlglot parses `FROM a, b` and `a CROSS JOIN b` alike, so whether the cross join was
    written on purpose is read from the text (`explicit_cross_join`)."""
    aliases = set(facts.tables) | facts.others
    if len(aliases) < 2:
        return [], []
    g = nx.Graph()
    g.add_nodes_from(aliases)
    for link in facts.links:
        members = sorted(link)
        for other in members[1:]:
            g.add_edge(members[0], other)
    components = [c for c in nx.connected_components(g) if not c <= facts.single_row]
    if len(components) <= 1:
        return [], []
    groups = [", ".join(sorted(c)) for c in components]
    unlinked = [a for c in components for a in c if a in facts.explicit_cross]
    explicit = explicit_cross_join and bool(unlinked)
    problem = SqlProblem.of(
        "cartesian_join",
        f"Nothing joins these groups of tables: {' | '.join(groups)}; every row of one pairs "
        "with every row of the other.",
        "Add the join condition (ON …, or a WHERE equality between them).",
        groups=groups,
    )
    return ([], [problem]) if explicit else ([problem], [])
