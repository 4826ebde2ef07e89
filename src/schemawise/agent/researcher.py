"""The researcher: when a query names a table or column that does not exist, find what the
writer meant — by spelling, by the index's search (meaning, not letters: "clients" finds
`customers`), and by reading the candidate tables — and say it in a few lines the fix
prompt carries. With a model, a small tool-using agent does the looking; without one (or
when it fails), the same tools run in a fixed order."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from schemawise.errors import SchemawiseError
from schemawise.graph.model import SchemaGraph
from schemawise.validate.problems import SqlProblem

# words → tables ranked by the index (the context engine), best first
TableSearch = Callable[[str], list[str]]

NAME_PROBLEMS = frozenset({"unknown_table", "unknown_column"})


@dataclass
class SchemaLookup:
    """The researcher's tools over one database's graph (and its index, when there is one)."""

    graph: SchemaGraph
    search: TableSearch | None = None
    used: list[str] = field(default_factory=list)  # tool calls, for the record

    def search_tables(self, words: str) -> list[str]:
        """Tables whose names, descriptions or columns match the words, best first."""
        self.used.append(f"search_tables({words!r})")
        found: list[str] = []
        if self.search is not None:
            try:
                found = list(self.search(words))
            except SchemawiseError:
                found = []
        for name in self.closest_names(words, record=False):
            table = name.split(".")[0]
            if table not in found:
                found.append(table)
        return found[:6]

    def table_schema(self, table: str) -> str:
        """A table's columns with types, keys and descriptions, and how it joins."""
        self.used.append(f"table_schema({table!r})")
        entry = self.graph.table(table)
        if entry is None:
            close = self.closest_names(table, record=False)
            return f"No table {table}. Closest names: {', '.join(close) or 'none'}."
        columns = ", ".join(
            f"{c.name} {c.type}" + (f" ({c.comment})" if c.comment else "") for c in entry.columns
        )
        lines = [f"{entry.name}" + (f" — {entry.comment}" if entry.comment else ""),
                 f"  columns: {columns}"]  # fmt: skip
        if entry.primary_key:
            lines.append(f"  primary key: {', '.join(entry.primary_key)}")
        for edge in self.graph.edges:
            if entry.name in (edge.child_table, edge.parent_table):
                lines.append(
                    f"  joins {edge.child_table}.{','.join(edge.child_columns)} = "
                    f"{edge.parent_table}.{','.join(edge.parent_columns)} ({edge.cardinality})"
                )
        return "\n".join(lines)

    def closest_names(self, name: str, record: bool = True) -> list[str]:
        """Tables and table.columns spelled most like the name."""
        if record:
            self.used.append(f"closest_names({name!r})")
        wanted = name.lower().split(".")[-1]
        tables = [t.name for t in self.graph.tables]
        columns = [f"{t.name}.{c.name}" for t in self.graph.tables for c in t.columns]
        by_table = difflib.get_close_matches(wanted, tables, n=3, cutoff=0.6)
        by_column = [
            columns[i] for i in _close_indexes(wanted, [c.split(".")[-1].lower() for c in columns])
        ]
        return [*by_table, *by_column][:6]


def _close_indexes(word: str, names: list[str]) -> list[int]:
    scored = [
        (difflib.SequenceMatcher(None, word, name).ratio(), i) for i, name in enumerate(names)
    ]
    return [i for ratio, i in sorted(scored, reverse=True)[:3] if ratio >= 0.6]


def missing_names(problems: Sequence[SqlProblem]) -> list[str]:
    """The names the checks could not find."""
    names = []
    for problem in problems:
        if problem.type not in NAME_PROBLEMS:
            continue
        extra = problem.model_extra or {}
        name = extra.get("table") if problem.type == "unknown_table" else extra.get("column")
        if name and name not in names:
            names.append(str(name))
    return names


def research_without_model(lookup: SchemaLookup, names: Sequence[str]) -> list[str]:
    """The tools in a fixed order: search each name, read the best two tables found."""
    notes: list[str] = []
    read: set[str] = set()
    for name in names:
        found = lookup.search_tables(name)
        notes.append(f"'{name}' does not exist; closest tables: {', '.join(found) or 'none'}.")
        for table in found[:2]:
            if table not in read:
                read.add(table)
                notes.append(lookup.table_schema(table))
    return notes


def column_facts(graph: SchemaGraph, problems: Sequence[SqlProblem]) -> list[str]:
    """For each column the query put in the wrong table: what that table really holds, which
    tables hold the column, and the join that reaches them — stated, so a small model need not
    work it out (it tends to repeat the mistake when told only that the column is missing)."""
    from schemawise.errors import NoJoinPathError
    from schemawise.graph.paths import connecting_tree

    facts: list[str] = []
    for problem in problems:
        extra = problem.model_extra or {}
        if problem.type != "unknown_column" or not extra.get("column"):
            continue
        column, read_from = str(extra["column"]), extra.get("read_from")
        holders = [str(t) for t in extra.get("tables_with_column") or []][:3]
        entry = graph.table(str(read_from)) if read_from else None
        if entry is not None:
            names = ", ".join(c.name for c in entry.columns)
            facts.append(f"{entry.name} has no column {column}; its columns are: {names}.")
        for holder in holders:
            line = f"{column} is a column of {holder}."
            if entry is not None and holder != entry.name:
                try:
                    path = connecting_tree(graph, [entry.name, holder])
                    joins = " AND ".join(e.condition() for e in path.edges)
                    line += f" Reach it from {entry.name} with JOIN ... ON {joins}."
                except NoJoinPathError:
                    line += f" No join connects it to {entry.name}."
            facts.append(line)
    return list(dict.fromkeys(facts))


def research(lookup: SchemaLookup, names: Sequence[str], llm: object | None) -> list[str]:
    """Notes on what the hallucinated names should have been, for the fix prompt."""
    from schemawise.agent.llm import LLM

    if not names:
        return []
    if not isinstance(llm, LLM) or llm.small:
        return research_without_model(lookup, names)
    from pydantic_ai import Tool

    from schemawise.agent.prompts import RESEARCH_INSTRUCTIONS
    from schemawise.errors import ModelCallError

    tools = [
        Tool(lookup.search_tables, takes_ctx=False),
        Tool(lookup.table_schema, takes_ctx=False),
        Tool(lookup.closest_names, takes_ctx=False),
    ]
    prompt = f"Names that do not exist: {', '.join(names)}."
    try:
        note = llm.run("research", RESEARCH_INSTRUCTIONS, prompt, tools=tools, max_requests=4)
    except ModelCallError:
        return research_without_model(lookup, names)
    # The model's summary, and the schemas it read (the fix prompt gets facts, not only prose).
    schemas = [lookup.table_schema(t) for t in _tables_read(lookup.used)]
    return [str(note).strip(), *schemas]


def _tables_read(used: Sequence[str]) -> list[str]:
    tables = []
    for call in used:
        if call.startswith("table_schema("):
            name = call[len("table_schema(") : -1].strip("'\"")
            if name not in tables:
                tables.append(name)
    return tables
