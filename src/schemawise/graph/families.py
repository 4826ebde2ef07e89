"""Sharded families: tables that differ only by the digits in their name (`ga_sessions_20170701`,
`storms_1999`, `cbsa_2018_1yr`) and share their columns are one thing to a reader. Retrieval
sees one entry per family (`ga_sessions_*`), so that 366 daily shards do not crowd out every
other table, nor cost 366 cards in a prompt."""

from __future__ import annotations

import re
from collections import defaultdict

import networkx as nx

from schemawise.graph.model import Column, Edge, SchemaGraph, Table
from schemawise.graph.naming import KEY_WORDS, split_identifier

_DIGITS = re.compile(r"\d+")

# Shards share many of their columns (each with some other shard: schemas grow over the
# years); tables that differ by digits and share few columns are different things.
MIN_COLUMN_OVERLAP = 0.3
LINK_WINDOW = 3
# Partitions named by a value (a state, a region) must look alike more closely, and be several.
VARIANT_OVERLAP = 0.8
MIN_VARIANTS = 3
MIN_MEMBERS = 2


def family_pattern(name: str) -> str:
    """`ds.ga_sessions_20170701` → `ds.ga_sessions_*`: digit runs of the last part become `*`."""
    head, _, last = name.rpartition(".")
    pattern = _DIGITS.sub("*", last)
    return f"{head}.{pattern}" if head else pattern


def _keys(table: Table) -> set[str]:
    return {
        c.name.lower()
        for c in table.columns
        if (words := split_identifier(c.name)) and words[-1] in KEY_WORDS
    }


def _linked(a: Table, b: Table, overlap: float = MIN_COLUMN_OVERLAP) -> bool:
    """Shards share columns, and their key-like columns agree (one's are a subset of the
    other's, as a growing schema adds some): `customer_1` referencing `order_3_id` and
    `customer_2` referencing `product_5_id` are different tables that happen to look alike."""
    keys_a, keys_b = _keys(a), _keys(b)
    return _overlap(a, b) >= overlap and (keys_a <= keys_b or keys_b <= keys_a)


def _overlap(a: Table, b: Table) -> float:
    left = {c.name.lower() for c in a.columns}
    right = {c.name.lower() for c in b.columns}
    if not left and not right:
        return 1.0
    return len(left & right) / len(left | right)


def _largest_linked(members: list[Table], overlap: float = MIN_COLUMN_OVERLAP) -> list[Table]:
    """The largest set of members chained by shared columns (single linkage): a schema that
    grows year by year still links each shard to the next. Members are in name order, so each
    is compared with its few predecessors only (linear in the number of shards)."""
    linked: nx.Graph[int] = nx.Graph()
    linked.add_nodes_from(range(len(members)))
    for i in range(1, len(members)):
        for j in range(max(0, i - LINK_WINDOW), i):
            if _linked(members[i], members[j], overlap):
                linked.add_edge(i, j)
    components: list[set[int]] = list(nx.connected_components(linked))
    largest = max(components, key=lambda c: (len(c), -min(c)))
    return [members[i] for i in sorted(largest)]


def group_families(tables: list[Table]) -> list[list[Table]]:
    """Tables grouped into families (a table alone is a group of one), in first-seen order."""
    by_pattern: dict[str, list[Table]] = defaultdict(list)
    for table in tables:
        if _DIGITS.search(table.name.rpartition(".")[2]):
            by_pattern[family_pattern(table.name)].append(table)
    groups: dict[str, list[Table]] = {}
    member_of: dict[str, str] = {}
    by_name = {t.name.lower(): t for t in tables}
    for pattern, members in by_pattern.items():
        if len(members) < MIN_MEMBERS or any(m.kind != members[0].kind for m in members):
            continue
        shards = _largest_linked(sorted(members, key=lambda t: t.name))
        if len(shards) < MIN_MEMBERS:
            continue
        # `activities` beside `activities_23`, `activities_24`: the current version of the
        # same table joins its family when it looks like the shards.
        base = by_name.get(re.sub(r"_?\*$", "", pattern).lower())
        if base is not None and base.kind == shards[0].kind and _linked(base, shards[-1]):
            shards = [base, *shards]
        groups[pattern] = shards
        member_of.update({m.name: pattern for m in shards})
    # Tables partitioned by a value in their name (`census_tracts_alabama` …
    # `census_tracts_wyoming`): at least three, nearly the same columns, one varying last word.
    by_stem: dict[tuple[str, str, str], list[Table]] = defaultdict(list)
    partitions: list[tuple[str, str, str, str]] = []  # schema, stem, kind, pattern
    for table in tables:
        head, _, last = table.name.rpartition(".")
        cut = last.rfind("_")
        if table.name not in member_of and cut > 0:
            by_stem[(head.lower(), last[:cut].lower(), table.kind)].append(table)
    # Shorter stems first: `census_tracts_new_york` … belong to `census_tracts_*`, not to a
    # family of their own (`census_tracts_new_*`); they join it below.
    for (head, stem, kind), members in sorted(by_stem.items(), key=lambda kv: len(kv[0][1])):
        extends = any(
            (head, kind) == (p_head, p_kind) and stem.startswith(p_stem + "_")
            for p_head, p_stem, p_kind, _ in partitions
        )
        if len(members) < MIN_VARIANTS or extends:
            continue
        variants = _largest_linked(sorted(members, key=lambda t: t.name), VARIANT_OVERLAP)
        if len(variants) >= MIN_VARIANTS:
            name = variants[-1].name
            pattern = f"{name[: name.rfind('.') + 1]}{name.rpartition('.')[2][: len(stem)]}_*"
            groups[pattern] = variants
            member_of.update({m.name: pattern for m in variants})
            partitions.append((name.rpartition(".")[0].lower(), stem, variants[0].kind, pattern))
    # Values of several words (`census_tracts_north_dakota`) join the partition their
    # one-word siblings formed, when their columns agree.
    for table in tables:
        head, _, last = table.name.rpartition(".")
        for p_head, stem, kind, pattern in partitions if table.name not in member_of else []:
            if (
                (head.lower(), kind) == (p_head, table.kind)
                and last.lower().startswith(stem + "_")
                and _overlap(table, groups[pattern][-1]) >= VARIANT_OVERLAP
            ):
                groups[pattern] = sorted([*groups[pattern], table], key=lambda t: t.name)
                member_of[table.name] = pattern
                break
    out: list[list[Table]] = []
    emitted: set[str] = set()
    for table in tables:
        family = member_of.get(table.name)
        if family is None:
            out.append([table])
        elif family not in emitted:
            emitted.add(family)
            out.append(groups[family])
    return out


def family_name(members: list[Table]) -> str:
    """`ga_sessions_*` for digit shards; `census_tracts_*` for value partitions."""
    newest = members[-1]
    pattern = family_pattern(newest.name)
    if "*" in pattern:
        return pattern
    # Value partitions share the words before their values: `census_tracts_wyoming` and
    # `census_tracts_west_virginia` → `census_tracts_*`.
    head = newest.name.rpartition(".")[0]
    shared = _common_prefix([m.name.rpartition(".")[2] for m in members])
    stem = shared[: shared.rfind("_")] if "_" in shared else shared
    return f"{head}.{stem}_*" if head else f"{stem}_*"


def _common_prefix(names: list[str]) -> str:
    first, last = min(names), max(names)  # the two most different in sorted order
    size = 0
    while size < min(len(first), len(last)) and first[size] == last[size]:
        size += 1
    return first[:size]


def family_table(members: list[Table]) -> Table:
    """One entry for a family: the newest shard's columns, then any column only older shards
    have (schemas grow over time; a question may be about an old column)."""
    newest = members[-1]
    columns: list[Column] = list(newest.columns)
    seen = {c.name.lower() for c in columns}
    for member in reversed(members[:-1]):
        for column in member.columns:
            if column.name.lower() not in seen:
                seen.add(column.name.lower())
                columns.append(column)
    rows = [m.row_count for m in members if m.row_count is not None]
    return newest.model_copy(
        update={
            "name": family_name(members),
            "columns": columns,
            "row_count": sum(rows) if rows else None,
            "shards": [m.name for m in members],
        }
    )


def collapse(graph: SchemaGraph) -> SchemaGraph:
    """The graph with each sharded family as one table; edges of members move to the family.
    Returns the graph itself when nothing collapses."""
    groups = group_families(graph.tables)
    if all(len(g) == 1 for g in groups):
        return graph
    rename: dict[str, str] = {}
    tables: list[Table] = []
    for group in groups:
        if len(group) == 1:
            tables.append(group[0])
            continue
        family = family_table(group)
        tables.append(family)
        rename.update({m.name: family.name for m in group})
    edges: list[Edge] = []
    seen: set[tuple[object, ...]] = set()
    for edge in graph.edges:
        moved = edge.model_copy(
            update={
                "child_table": rename.get(edge.child_table, edge.child_table),
                "parent_table": rename.get(edge.parent_table, edge.parent_table),
                "via": rename.get(edge.via, edge.via) if edge.via else None,
            }
        )
        if moved.child_table == moved.parent_table and edge.child_table != edge.parent_table:
            continue  # a join between two shards of one family says nothing to a reader
        if moved.key() in seen:
            continue
        seen.add(moved.key())
        edges.append(moved)
    # A new graph, not a copy: a copy would share the original's private caches.
    return SchemaGraph(
        source=graph.source, dialect=graph.dialect, tables=tables, edges=edges,
        version=graph.version, partial=graph.partial, problems=graph.problems,
    )  # fmt: skip


def collapsed(graph: SchemaGraph) -> SchemaGraph:
    """`collapse`, computed once per graph."""
    return graph.cached("families", collapse)
