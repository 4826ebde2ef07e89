"""A token budget the pack keeps, and says it kept.

`fit_budget` returns a pack whose text is at most `budget` tokens (as `count_tokens` counts
it), taking parts out in this order, each kind to the end before the next:

1. examples, the last first;
2. value lists: the values shown beside columns, from the last column up, then the value
   meanings (`value_mappings`), the last first;
2b. descriptions: the columns', from the last column up, then the tables', from the last
   table up (a database comment shown from the schema stays with its column);
3. tier-2 columns, from the last up — never a key or join column of a table the pack keeps,
   never a table's last column;
4. definitions, the last first;
5. whole tables, from the lowest score up (the later first on a tie), never the first table,
   and only a table whose going leaves the others joined (a leaf of the join tree, or a table
   outside it): its columns and joins go with it, and the path's grain and warnings are
   worked out again for the tables left;
6. the first table's columns other than its keys and join columns, the last first, keeping
   at least one.

Cutting whole kinds in turn can overshoot: a table going may free far more than the budget
needed. So what was taken out is then offered back, the last taken first (the most needed
first: the first table's columns, then tables from the highest score down, definitions,
columns, value meanings, values, examples), each part kept back in if the pack still fits — a
table only where it joins a table left, a column's values only beside a column left.

What is left after the cuts — the first table with its primary key and join columns (or its best
column when it has none) — is the smallest honest pack: a table without its keys cannot be
joined or counted right, and a table without columns says nothing. When even that is over the
budget, it is returned as it is with `over_budget` true, not cut further and not silently:
`tokens` then exceeds `budget`. Whatever was taken out is listed in `dropped` (kind and name)
and `truncated` is true.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from schemawise.graph.model import SchemaGraph
from schemawise.graph.paths import PathEdge, grain_and_warnings
from schemawise.prune.columns import join_keys_of, kept_keys
from schemawise.retrieve.pack import ContextPack, DroppedPart
from schemawise.retrieve.render import count_tokens, render


def fit_budget(pack: ContextPack, graph: SchemaGraph, budget: int) -> ContextPack:
    """The pack within `budget` tokens (see the module docstring); `pack` is left unchanged."""
    fitted = pack.model_copy(deep=True)
    fitted.budget = budget
    _measure(fitted, graph)
    dropped: list[DroppedPart] = []
    cuts = _cuts(fitted, graph)
    while fitted.tokens > budget:
        cut = next(cuts, None)
        if cut is None:  # the smallest honest pack
            break
        dropped.append(cut)
        _measure(fitted, graph)
    fitted.dropped = dropped
    if dropped and fitted.tokens <= budget:
        fitted = _refilled(pack, graph, budget, dropped)
    fitted.budget = budget
    fitted.truncated = bool(fitted.dropped)
    fitted.over_budget = fitted.tokens > budget
    return fitted


def _refilled(
    pack: ContextPack, graph: SchemaGraph, budget: int, dropped: list[DroppedPart]
) -> ContextPack:
    """The pack without `dropped`, after each part was offered back, the last dropped first."""
    out = list(dropped)
    fitted = without(pack, graph, out)
    for part in reversed(dropped):
        rest = [d for d in out if d != part]
        candidate = without(pack, graph, rest)
        if candidate.tokens <= budget and _shows(candidate, pack, part):
            out, fitted = rest, candidate
    return fitted


def without(pack: ContextPack, graph: SchemaGraph, parts: list[DroppedPart]) -> ContextPack:
    """`pack` with these parts taken out (tables in the order given), measured, and saying so:
    what the cuts leave is exactly this pack of what they took."""
    out = {(d.kind, d.name) for d in parts}
    fitted = pack.model_copy(deep=True)
    fitted.examples = [e for e in fitted.examples if ("example", _first_line(e)) not in out]
    for column in fitted.columns:
        if ("values", f"{column.table}.{column.name}") in out:
            column.values = []
        if ("description", f"{column.table}.{column.name}") in out:
            column.description = ""
    for choice in fitted.tables:
        if ("description", choice.name) in out:
            choice.description = ""
    fitted.value_mappings = {
        k: v for k, v in fitted.value_mappings.items() if ("value_mapping", k) not in out
    }
    fitted.columns = [c for c in fitted.columns if ("column", f"{c.table}.{c.name}") not in out]
    fitted.definitions = [
        d for d in fitted.definitions if ("definition", d.split(":", 1)[0]) not in out
    ]
    for part in parts:
        if part.kind == "table":
            _drop_table(fitted, part.name)
    fitted.dropped = list(parts)
    _measure(fitted, graph)
    return fitted


def _shows(candidate: ContextPack, pack: ContextPack, part: DroppedPart) -> bool:
    """The part put back shows in the pack: its column or table is there, and a table put back
    joins the others (or joined none in the pack handed in)."""
    if part.kind in ("values", "column"):
        table, name = part.name.rsplit(".", 1)
        present = [c for c in candidate.columns if c.table == table and c.name == name]
        return bool(present) and (part.kind == "column" or bool(present[0].values))
    if part.kind == "value_mapping":
        return part.name in candidate.value_mappings
    if part.kind == "description":
        return any(t.name == part.name and t.description for t in candidate.tables) or any(
            f"{c.table}.{c.name}" == part.name and c.description for c in candidate.columns
        )
    if part.kind == "table":
        return any(t.name == part.name for t in candidate.tables) and (
            _in_joins(candidate, part.name) or not _in_joins(pack, part.name)
        )
    return True


def _in_joins(pack: ContextPack, table: str) -> bool:
    return any(table in (e["left"], e["right"]) for p in pack.join_paths for e in p["edges"])


def _measure(pack: ContextPack, graph: SchemaGraph) -> None:
    pack.text = render(pack, graph)
    pack.tokens = count_tokens(pack.text)


def _cuts(pack: ContextPack, graph: SchemaGraph) -> Iterator[DroppedPart]:
    """Takes the parts out of `pack` one at a time, in the documented order, yielding what it
    took each time; the caller stops asking once the pack fits."""
    while pack.examples:
        yield DroppedPart(kind="example", name=_first_line(pack.examples.pop()))
    for column in reversed(pack.columns):
        if column.values:
            column.values = []
            yield DroppedPart(kind="values", name=f"{column.table}.{column.name}")
    while pack.value_mappings:
        mapped, _ = pack.value_mappings.popitem()
        yield DroppedPart(kind="value_mapping", name=mapped)
    for column in reversed(pack.columns):
        if column.description:
            column.description = ""
            yield DroppedPart(kind="description", name=f"{column.table}.{column.name}")
    for choice in reversed(pack.tables):
        if choice.description:
            choice.description = ""
            yield DroppedPart(kind="description", name=choice.name)
    for column in reversed(list(pack.columns)):
        if column.tier == 2 and _removable(pack, graph, column.table, column.name):
            pack.columns.remove(column)
            yield DroppedPart(kind="column", name=f"{column.table}.{column.name}")
    while pack.definitions:
        yield DroppedPart(kind="definition", name=pack.definitions.pop().split(":", 1)[0])
    while (table := _next_table(pack)) is not None:
        _drop_table(pack, table)
        yield DroppedPart(kind="table", name=table)
    first = pack.tables[0].name if pack.tables else None
    for column in reversed(list(pack.columns)):
        if column.table == first and _removable(pack, graph, column.table, column.name):
            pack.columns.remove(column)
            yield DroppedPart(kind="column", name=f"{column.table}.{column.name}")


def _first_line(example: str) -> str:
    return example.split("\n", 1)[0].removeprefix("-- ")


def _removable(pack: ContextPack, graph: SchemaGraph, table: str, column: str) -> bool:
    """Neither a key or join column of the pack's tables nor the table's last column."""
    tables = [t.name for t in pack.tables]
    if (table, column) in kept_keys(graph, tables, join_keys_of(pack.join_paths)):
        return False
    return sum(c.table == table for c in pack.columns) > 1


def _next_table(pack: ContextPack) -> str | None:
    """The lowest-scoring table but the first whose going leaves the others joined."""
    degree: Counter[str] = Counter()
    for path in pack.join_paths:
        for edge in path["edges"]:
            if edge["left"] == edge["right"]:
                continue  # a table's join to itself joins it to no other table
            degree[edge["left"]] += 1
            degree[edge["right"]] += 1
    leaves = [(t.score, -i, t.name) for i, t in enumerate(pack.tables) if i and degree[t.name] <= 1]
    return min(leaves)[2] if leaves else None


def _drop_table(pack: ContextPack, table: str) -> None:
    pack.tables = [t for t in pack.tables if t.name != table]
    pack.columns = [c for c in pack.columns if c.table != table]
    prefix = f"{table}."
    pack.value_mappings = {k: v for k, v in pack.value_mappings.items() if not k.startswith(prefix)}
    pack.join_paths = [p for p in (_without(path, table) for path in pack.join_paths) if p]


def _without(path: dict[str, Any], table: str) -> dict[str, Any] | None:
    """The join path without a leaf table; None when no join is left."""
    edges = [e for e in path["edges"] if table not in (e["left"], e["right"])]
    if not edges:
        return None
    tables = [t for t in path["tables"] if t != table]
    grain, warnings = grain_and_warnings(tables, [PathEdge.model_validate(e) for e in edges])
    return {**path, "tables": tables, "edges": edges, "grain": grain, "warnings": warnings}
