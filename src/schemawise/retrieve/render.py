"""The pack as prompt text: definitions, value meanings, `CREATE TABLE`-like blocks (each
after its table's description; primary keys marked, column comments, descriptions and
values), examples, joins and their warnings."""

from __future__ import annotations

from collections import defaultdict

from schemawise.graph.model import SchemaGraph
from schemawise.retrieve.pack import ColumnChoice, ContextPack
from schemawise.retrieve.values import render_values


def render(pack: ContextPack, graph: SchemaGraph) -> str:
    lines = [f"-- definition: {d}" for d in pack.definitions]
    for mapped, values in pack.value_mappings.items():
        meaning = ", ".join(f"{k} = {v}" for k, v in values.items())
        lines.append(f"-- values of {mapped}: {meaning}")
    by_table: dict[str, list[ColumnChoice]] = defaultdict(list)
    for column in pack.columns:
        by_table[column.table].append(column)
    for choice in pack.tables:
        table = graph.table(choice.name)
        if table is None:
            continue
        cols = []
        chosen_columns = by_table.get(choice.name, [])
        shown = {c.name for c in chosen_columns}
        composite_key = len(table.primary_key) > 1 and set(table.primary_key) <= shown
        for number, column in enumerate(chosen_columns):
            col = table.column(column.name)
            last = number == len(chosen_columns) - 1 and not composite_key
            key = " PRIMARY KEY" if table.primary_key == [column.name] else ""
            # A description ends no sentence before the values: "signup; e.g. 'SMB'".
            described = column.description.rstrip(".")
            said = (col.comment if col else "", described, render_values(column.values))
            notes = [n for n in said if n]
            comment = f" -- {'; '.join(notes)}" if notes else ""
            comma = "" if last else ","
            cols.append(f"  {column.name} {col.type if col else ''}{key}{comma}{comment}")
        if composite_key:
            cols.append(f"  PRIMARY KEY ({', '.join(table.primary_key)})")
        if choice.description:
            lines.append(f"-- {choice.name}: {choice.description}")
        if table.shards:
            lines.append(
                f"-- {choice.name} stands for {len(table.shards)} sharded tables, "
                f"{table.shards[0]} … {table.shards[-1]}"
            )
        lines.append(f"CREATE TABLE {choice.name} (\n" + "\n".join(cols) + "\n);")
    lines.extend(f"-- example:\n{e}" for e in pack.examples)
    for path in pack.join_paths:
        for edge in path["edges"]:
            on = " AND ".join(f"{edge['left']}.{c} = {edge['right']}.{p}" for c, p in edge["on"])
            lines.append(f"-- join: {on} ({edge['cardinality']})")
        for warning in path.get("warnings", []):
            lines.append(f"-- warning: {warning}")
    return "\n".join(lines)


def count_tokens(text: str) -> int:
    """About four characters a token, as for common BPE tokenizers on code and English."""
    return (len(text) + 3) // 4


def with_text(pack: ContextPack, graph: SchemaGraph) -> ContextPack:
    """The pack with its text rendered and counted."""
    text = render(pack, graph)
    return pack.model_copy(update={"text": text, "tokens": count_tokens(text)})
