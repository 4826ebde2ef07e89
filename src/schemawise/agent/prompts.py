"""Every text the assistant sends a model, as pure functions of what it knows: the context
pack, the checks' problems, the result. Nothing here calls a model."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from schemawise.validate.problems import SqlProblem

DIALECT_NAMES = {"postgres": "PostgreSQL", "sqlite": "SQLite", "duckdb": "DuckDB"}

WRITER_INSTRUCTIONS = """\
You write one read-only {dialect} query that answers the user's question.
Use only the tables and columns in the schema you are given; join tables only on the join \
paths listed. When a join path says it multiplies rows, aggregate the many side in a \
subquery before you SUM or AVG. Return exactly the columns the question asks for.
Reply with one JSON object and nothing else:
{{"assumptions": ["what you assumed that the user should verify"], "query": "SELECT ...", \
"explanation": "one short sentence", "tables": ["tables used"], \
"columns": ["table.column used"]}}"""

SEMANTIC_FILTER_NOTE = (
    "Searchable tables accept a meaning filter in WHERE: sw_match(table, 'words') keeps the "
    "rows whose text means the words (use it for fuzzy descriptions, never for ids)."
)


@dataclass(frozen=True)
class PriorTurn:
    """A previous turn of the conversation that a follow-up may build on."""

    question: str
    sql: str | None
    columns: Sequence[str] = ()
    row_count: int | None = None


def writer_instructions(dialect: str) -> str:
    return WRITER_INSTRUCTIONS.format(dialect=DIALECT_NAMES.get(dialect, dialect))


def _history(turns: Sequence[PriorTurn]) -> list[str]:
    if not turns:
        return []
    lines = ["Earlier in this conversation (the new question may refer to it):"]
    for turn in turns[-3:]:
        lines.append(f"- question: {turn.question}")
        if turn.sql:
            lines.append(f"  SQL: {turn.sql}")
        if turn.columns:
            lines.append(f"  result: {turn.row_count} rows of {', '.join(turn.columns)}")
    return [*lines, ""]


def writer_prompt(
    question: str,
    schema_text: str,
    *,
    evidence: str = "",
    join_notes: Sequence[str] = (),
    searchable: Sequence[str] = (),
    history: Sequence[PriorTurn] = (),
    missing: Sequence[str] = (),
) -> str:
    """`missing`: names the question writes as a table or column that the database lacks
    (ContextPack.unknown_names): said, so that the model does not write them in."""
    lines = ["Schema:", schema_text.strip(), ""]
    if join_notes:
        lines += ["Join paths:", *[f"- {note}" for note in join_notes], ""]
    if searchable:
        lines += [f"{SEMANTIC_FILTER_NOTE} Searchable: {', '.join(searchable)}.", ""]
    lines += _history(history)
    if missing:
        lines += [f"Not in this database: {', '.join(missing)} (no table or column of that "
                  "name). If the question needs it, say so in an assumption.", ""]  # fmt: skip
    lines.append(f"Question: {question}")
    if evidence:
        lines.append(f"Hints: {evidence}")
    return "\n".join(lines)


def problem_lines(problems: Sequence[SqlProblem]) -> list[str]:
    lines = []
    for problem in problems:
        line = f"- {problem.type}: {problem.message}"
        if problem.hint:
            line += f" Hint: {problem.hint}"
        lines.append(line)
    return lines


def fix_prompt(
    original_prompt: str, sql: str, problems: Sequence[SqlProblem], research: Sequence[str] = ()
) -> str:
    lines = [original_prompt, "", "Your previous query:", sql, "", "It failed these checks:"]
    lines += problem_lines(problems)
    if research:
        lines += ["", "What the schema says about the names involved:", *research]
    lines += ["", "Write a corrected query. Reply with the same JSON object."]
    return "\n".join(lines)


ANSWER_INSTRUCTIONS = """\
You state the answer to the user's question in one or two plain sentences, using only the \
numbers and values in the result you are given. Never invent or round a number; if the \
result is cut short, say it shows the first rows."""


def answer_prompt(
    question: str, sql: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], total: int
) -> str:
    shown = [dict(zip(columns, row, strict=False)) for row in rows]
    return "\n".join(
        [
            f"Question: {question}",
            f"SQL: {sql}",
            f"Result ({total} rows{', first ' + str(len(rows)) if total > len(rows) else ''}):",
            json.dumps(shown, default=str),
        ]
    )


RANKER_INSTRUCTIONS = """\
You judge which tables a SQL query needs to answer a question. Score every table from 1 \
(unrelated) to 10 (certainly needed), with a short reason. Tables that only connect two \
needed tables are needed too. Reply with one JSON object: \
{"tables": [{"name": "...", "score": 7, "reason": "..."}]}"""


def ranker_prompt(question: str, tables: Sequence[tuple[str, str]]) -> str:
    """`tables`: (name, what is known of it in one line: description, columns, reasons)."""
    lines = [f"Question: {question}", "", "Tables:"]
    lines += [f"- {name}: {about}" for name, about in tables]
    return "\n".join(lines)


RESEARCH_INSTRUCTIONS = """\
A SQL query used a table or column that does not exist. Use the tools to find what the \
writer meant: search the schema, read the candidate tables. Reply with the real names and \
one line each on how to use them; do not write SQL."""


ROUTER_INSTRUCTIONS = """\
Classify the user's message about a database into one intent:
- write_query: a question answered by running SQL on the data
- find_tables: asks which tables or columns hold something
- fix_query: contains SQL or a database error to explain or repair
- explain_metadata: asks what a table or column means or how tables relate
Reply with the intent name only."""
