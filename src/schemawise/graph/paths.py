"""Join paths: the shortest path between two tables and a minimal tree connecting several,
each with the grain of its result and a warning wherever a join multiplies rows."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import networkx as nx
from networkx.algorithms.approximation import steiner_tree
from pydantic import BaseModel, Field

from schemawise.errors import NoJoinPathError, TableNotFoundError
from schemawise.graph.model import Cardinality, Edge, SchemaGraph

# Edge costs: declared and verified joins are preferred over guesses; many-to-many joins last.
_SOURCE_COST = {
    "foreign_key": 0.0,
    "dbt_relationship": 0.05,
    "overlay": 0.05,
    "inferred_name": 0.2,
    "query_log": 0.2,
    "value_overlap": 0.3,
    "view_lineage": 0.5,
}


class PathEdge(BaseModel):
    left: str  # the child table (the "many" side of a many-to-one)
    right: str  # the parent table
    on: list[tuple[str, str]]  # (child column, parent column) pairs
    cardinality: Cardinality
    source: str
    # Share of the child's distinct values (a sample) found in the parent, when measured.
    inclusion: float | None = None

    @classmethod
    def of(cls, edge: Edge) -> PathEdge:
        """A graph edge as a join of a path, read child → parent."""
        return cls(
            left=edge.child_table, right=edge.parent_table,
            on=list(zip(edge.child_columns, edge.parent_columns, strict=True)),
            cardinality=edge.cardinality, source=edge.source, inclusion=edge.evidence.inclusion,
        )  # fmt: skip

    def condition(self) -> str:
        return " AND ".join(f"{self.left}.{c} = {self.right}.{p}" for c, p in self.on)


class JoinPath(BaseModel):
    tables: list[str]
    edges: list[PathEdge] = Field(default_factory=list)
    grain: str = ""
    warnings: list[str] = Field(default_factory=list)

    def render(self) -> str:
        lines = [f"tables: {', '.join(self.tables)}"]
        for edge in self.edges:
            lines.append(f"  JOIN {edge.condition()}  [{_arrow(edge.cardinality)}, {edge.source}]")
        lines.append(f"grain: {self.grain}")
        lines.extend(f"warning: {w}" for w in self.warnings)
        return "\n".join(lines)


def _arrow(cardinality: Cardinality) -> str:
    return {"many_to_one": "N:1", "one_to_one": "1:1", "many_to_many": "N:M"}[cardinality]


# What a join measured to match no value adds to its cost: more than the doubt of the least
# likely guess (3.0), so that a path takes any join that returns rows first.
NO_MATCH_COST = 4.0


def edge_cost(edge: Edge) -> float:
    # Doubt costs more than distance: a 0.3-confidence guess (cost 3.4) loses to three
    # declared joins (cost 3), while a confirmed inference (0.99: cost 1.23) beats two.
    cost = 1.0 + _SOURCE_COST.get(edge.source, 0.3) + 3.0 * (1.0 - edge.confidence)
    if edge.cardinality == "many_to_many":
        cost += 1.0
    if edge.evidence.inclusion == 0.0:
        # Measured to match no value: the join returns no rows, so any other way between the
        # two tables (the team's typo, `wh_id = wh_nm`, beside the key that holds) is better.
        cost += NO_MATCH_COST
    return cost


def join_graph(graph: SchemaGraph) -> nx.Graph:
    """Undirected table graph; between two tables only the cheapest edge is kept.

    Relationships through a bridge (`via`) are left out: a path must walk through the bridge.
    """
    g = nx.Graph()
    g.add_nodes_from(t.name for t in graph.tables)
    for edge in graph.edges:
        if edge.via is not None or edge.child_table == edge.parent_table:
            continue
        cost = edge_cost(edge)
        current = g.get_edge_data(edge.child_table, edge.parent_table)
        if current is None or cost < current["weight"]:
            g.add_edge(edge.child_table, edge.parent_table, weight=cost, edge=edge)
    return g


# What joining two tables through a parent both reference costs, beyond the two joins: the
# same as a many-to-many join's surcharge, because that is what it is — customers and sales
# reps "joined" through their region pair every customer with every rep of the region (a
# chasm trap). One declared N:M join (cost 2) then beats two joins through the hub (cost 2+1).
CHASM_COST = 1.0


# How an edge is weighed: its cost, or None to leave it out (networkx then does not walk it).
Weight = str | Callable[[str, str, dict[str, Any]], float | None]


def _avoiding(blocked: set[str]) -> Weight:
    """Edge costs with `blocked` tables left out: the same walks as on the subgraph without
    them, without building one (a filtered view of a 2,000-table graph made every walk over it
    several times slower)."""

    def weight(a: str, b: str, data: dict[str, Any]) -> float | None:
        return None if a in blocked or b in blocked else float(data["weight"])

    return weight


def _cheapest_tree(g: nx.Graph, names: list[str], weight: Weight = "weight") -> nx.Graph:
    """The cheapest tree joining `names` in `g`: exact for two, Steiner approximation beyond.
    Raises NetworkXNoPath when some of them are not connected."""
    if len(names) == 1:
        alone = nx.Graph()
        alone.add_node(names[0])
        return alone
    if len(names) == 2:
        nodes = nx.shortest_path(g, names[0], names[1], weight=weight)
        tree = g.subgraph(nodes).copy()
        tree.remove_edges_from(
            [(a, b) for a, b in list(tree.edges) if abs(nodes.index(a) - nodes.index(b)) != 1]
        )
        return tree
    # The approximation runs on the tables that lie on a cheapest path between two
    # terminals: the same trees in practice, at a cost that does not grow with the
    # catalog (a 2,000-table component took 0.1 s per call).
    near: set[str] = set()
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            near.update(nx.shortest_path(g, first, second, weight=weight))
    return steiner_tree(_ordered_subgraph(g, near), names, weight="weight")


def _ordered_subgraph(g: nx.Graph, nodes: set[str]) -> nx.Graph:
    """The subgraph on `nodes` as a graph of its own, its tables and joins in `g`'s order: a
    view of a few tables iterates them in set order, which changes with the hash seed, and
    the Steiner approximation breaks ties by that order."""
    ordered = [n for n in g if n in nodes]
    sub = nx.Graph()
    sub.add_nodes_from(ordered)
    sub.add_edges_from((a, b, data) for a, b, data in g.edges(ordered, data=True) if b in nodes)
    return sub


def _chasms(tree: nx.Graph) -> dict[str, int]:
    """Tables the tree passes through as the parent of two or more of its joins, with how many
    such joins: each pair of those children meets only through it."""
    children: dict[str, int] = {}
    for _, _, data in tree.edges(data=True):
        edge: Edge = data["edge"]
        # A many-to-many join is charged as one already; one-to-one joins multiply nothing.
        if edge.cardinality == "many_to_one":
            children[edge.parent_table] = children.get(edge.parent_table, 0) + 1
    return {t: n for t, n in children.items() if n >= 2}


def _penalised_cost(tree: nx.Graph) -> float:
    chasm = sum(n - 1 for n in _chasms(tree).values())
    return float(tree.size(weight="weight")) + CHASM_COST * chasm


def _without_chasms(g: nx.Graph, names: list[str], tree: nx.Graph) -> nx.Graph:
    """The tree, or one that does not pass through a shared parent when that costs no more
    once each meeting of two children there is charged CHASM_COST. A hub that was not asked
    for is left out; one that was is joined by a single edge to the tree of the others."""
    tried: set[str] = set()
    avoided: set[str] = set()
    while chasms := sorted(t for t in _chasms(tree) if t not in tried):
        hub = chasms[0]
        tried.add(hub)
        others = [n for n in names if n != hub and n not in avoided]
        if not others or len(others) < len([n for n in names if n != hub]):
            continue
        try:
            other = _cheapest_tree(g, others, _avoiding(avoided | {hub}))
            if hub in names:
                other = _attach(g, other, hub, names, avoided)
        except (nx.NetworkXNoPath, nx.NodeNotFound):
            continue  # without the hub the others do not meet
        if _penalised_cost(other) < _penalised_cost(tree):
            tree = other
            avoided.add(hub)
    return tree


def _attach(
    g: nx.Graph, tree: nx.Graph, table: str, names: list[str], avoided: set[str]
) -> nx.Graph:
    """The tree with the cheapest path from `table` to one of its tables added (not through
    `avoided` ones); on a tie, to the table asked for first (then by name), so that the same
    question gives the same tree."""
    distance, paths = nx.single_source_dijkstra(g, table, weight=_avoiding(avoided))
    order = {name: i for i, name in enumerate(names)}
    reachable = [n for n in tree.nodes if n in distance]
    if not reachable:
        raise nx.NetworkXNoPath(f"{table} reaches no table of the tree")
    nearest = min(reachable, key=lambda n: (round(distance[n], 9), order.get(n, len(order)), n))
    joined = nx.Graph(tree)
    for a, b in itertools.pairwise(paths[nearest]):
        joined.add_edge(a, b, **g.edges[a, b])
    return joined


def _resolve(graph: SchemaGraph, name: str) -> str:
    table = graph.table(name)
    if table is None:
        from difflib import get_close_matches

        names = [t.name for t in graph.tables]
        close = get_close_matches(name, names, n=3, cutoff=0.5)
        hint = f"Did you mean {', '.join(close)}?" if close else "List tables with `graph`."
        raise TableNotFoundError(f"No table named {name!r}.", hint)
    return table.name


def shortest_join_path(graph: SchemaGraph, start: str, end: str) -> JoinPath:
    return connecting_tree(graph, [start, end])


def connecting_tree(graph: SchemaGraph, tables: list[str]) -> JoinPath:
    """The cheapest tree of joins connecting `tables` (exact for two, Steiner approximation
    beyond), ordered from the first table outwards."""
    names = list(dict.fromkeys(_resolve(graph, t) for t in tables))
    g = graph.cached("join_graph", join_graph)
    if len(names) == 1:
        tree = nx.Graph()
        tree.add_node(names[0])
    else:
        component = nx.node_connected_component(g, names[0])
        unreachable = [n for n in names if n not in component]
        if unreachable:
            raise NoJoinPathError(
                f"No chain of joins connects {names[0]} to {', '.join(unreachable)}.",
                "Add the missing relationship (a foreign key, a query log, or an overlay), "
                "or query the tables separately.",
            )
        tree = _without_chasms(g, names, _cheapest_tree(g, names))
    order = list(nx.bfs_tree(tree, names[0])) if tree.number_of_edges() else names
    edges = []
    for a, b in nx.bfs_edges(tree, names[0]):
        edges.append(PathEdge.of(g.edges[a, b]["edge"]))
    path = JoinPath(tables=order, edges=edges)
    path.grain, path.warnings = grain_and_warnings(order, edges)
    return path


def grain_and_warnings(tables: list[str], edges: list[PathEdge]) -> tuple[str, list[str]]:
    """What one row of the joined result stands for, and where aggregates go wrong.

    Following many-to-one edges from child to parent never adds rows. The tables nothing in
    the tree depends on as a parent set the grain; with two or more of them, or any
    many-to-many edge, rows multiply and sums over the other tables count them repeatedly.
    """
    if not edges:
        return (f"one row per {tables[0]} row" if tables else ""), []
    grain, warnings = _grain_and_aggregate_warnings(tables, edges)
    return grain, warnings + [w for e in edges if (w := orphan_warning(e))]


def orphan_warning(edge: PathEdge) -> str | None:
    """A join whose child values are not all in the parent drops rows as an inner join: the
    count or sum comes out short, with nothing to say so."""
    if edge.inclusion is None or edge.inclusion >= 1.0:
        return None
    values = orphan_values([f"{edge.left}.{c}" for c, _ in edge.on])
    if edge.inclusion == 0.0:
        return (
            f"no value of {values.removeprefix('the values of ')} is found in {edge.right}: "
            "the join returns no rows; compare the values on both sides (spaces, case, types) "
            "before joining"
        )
    return (
        f"{orphan_share(edge.inclusion)} of {values} have no {edge.right} row (measured on "
        f"a sample of distinct values): an inner join drops those {edge.left} rows; "
        f"{edge.left} LEFT JOIN {edge.right} keeps them"
    )


def orphan_share(inclusion: float) -> str:
    """How many child values have no parent, in words that never round to 0% or 100%."""
    missing = 1.0 - inclusion
    if missing < 0.01:
        return "under 1%"
    if missing > 0.99:
        return "over 99%"
    return f"{round(missing * 100)}%"


def orphan_values(columns: list[str]) -> str:
    """`the values of t.c`, or for a composite join `the (t.a, t.b) pairs`."""
    if len(columns) == 1:
        return f"the values of {columns[0]}"
    return f"the ({', '.join(columns)}) {'pairs' if len(columns) == 2 else 'combinations'}"


def _grain_and_aggregate_warnings(
    tables: list[str], edges: list[PathEdge]
) -> tuple[str, list[str]]:
    # One-to-one partners share a grain (`shipments` is one row per `orders` row): a 1:1
    # cluster is one node, which has children when any of its tables has, and is named by its
    # first table. So `order_lines` → orders ← 1:1 shipments has one grain, order_lines.
    clusters = _one_to_one_clusters(tables, edges)
    with_children = {
        clusters[edge.right]
        for edge in edges
        if edge.cardinality == "many_to_one" and clusters[edge.left] != clusters[edge.right]
    }
    grain_tables: list[str] = []
    for table in tables:
        if clusters[table] not in with_children and not any(
            clusters[g] == clusters[table] for g in grain_tables
        ):
            grain_tables.append(table)
    warnings: list[str] = []
    many_to_many = [e for e in edges if e.cardinality == "many_to_many"]
    for edge in many_to_many:
        warnings.append(
            f"{edge.left} ↔ {edge.right} is many-to-many on {edge.condition()}: each row of "
            "either side can repeat; aggregate each side on its own key before joining"
        )
    if len(grain_tables) == 1 and not many_to_many:
        grain = grain_tables[0]
        repeated = [t for t in tables if t != grain and clusters[t] != clusters[grain]]
        if repeated:
            names = ", ".join(repeated)
            warnings.append(
                f"rows of {names} repeat once per {grain} row: SUM/AVG/COUNT over their columns "
                f"count each row several times; aggregate them before joining {grain}, or use "
                "COUNT(DISTINCT key)"
            )
        return f"one row per {grain} row", warnings
    if len(grain_tables) > 1:
        shared = _shared_parents(grain_tables, edges)
        for i, first in enumerate(grain_tables):
            for second in grain_tables[i + 1 :]:
                per = shared.get((first, second)) or "shared parent"
                warnings.append(
                    f"{first} and {second} are both many per {per}: joined together every "
                    f"{first} row pairs with every {second} row of the same {per}, so SUM over "
                    f"{first} after joining {second} double-counts: pre-aggregate {first} per "
                    f"{per} first (and {second} likewise)"
                )
        grain = " × ".join(grain_tables)
        return f"one row per combination of {grain} rows (fan-out)", warnings
    return "rows multiply across many-to-many joins", warnings


def _one_to_one_clusters(tables: list[str], edges: list[PathEdge]) -> dict[str, str]:
    """Each table's one-to-one cluster, named by one of its tables, whatever the order of the
    tables and edges (union-find)."""
    parent = {t: t for t in tables}

    def root(table: str) -> str:
        while parent[table] != table:
            parent[table] = parent[parent[table]]
            table = parent[table]
        return table

    for edge in edges:
        if edge.cardinality == "one_to_one" and edge.left in parent and edge.right in parent:
            parent[root(edge.right)] = root(edge.left)
    return {t: root(t) for t in tables}


def _shared_parents(grain_tables: list[str], edges: list[PathEdge]) -> dict[tuple[str, str], str]:
    """For each pair of grain tables, the nearest table both reach by many-to-one steps."""
    up: dict[str, list[str]] = {}
    for edge in edges:
        if edge.cardinality in ("many_to_one", "one_to_one"):
            up.setdefault(edge.left, []).append(edge.right)

    def ancestors(table: str) -> list[str]:
        seen: list[str] = []
        frontier = [table]
        while frontier:
            nxt = []
            for t in frontier:
                for parent in up.get(t, []):
                    if parent not in seen:
                        seen.append(parent)
                        nxt.append(parent)
            frontier = nxt
        return seen

    out = {}
    for i, first in enumerate(grain_tables):
        first_up = ancestors(first)
        for second in grain_tables[i + 1 :]:
            second_up = set(ancestors(second))
            common = [a for a in first_up if a in second_up]
            if common:
                out[(first, second)] = common[0]
    return out
