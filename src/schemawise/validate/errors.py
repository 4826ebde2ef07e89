"""Database errors → `{type, message, hint, …}`, enriched from the graph so that the next
attempt converges. One mapping table per backend, most specific first."""

from __future__ import annotations

import re
from difflib import get_close_matches

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from schemawise.graph.model import SchemaGraph, Table
from schemawise.validate.problems import SqlProblem
from schemawise.validate.resolve import tables_with_column

# (SQLSTATE, type): Postgres's own classification.
POSTGRES_STATES = {
    "42703": "unknown_column",
    "42P01": "unknown_table",
    "42702": "ambiguous_column",
    "42804": "type_mismatch",
    "42883": "type_mismatch",  # operator does not exist: integer = text
    "22P02": "type_mismatch",  # invalid input syntax for type
    "22007": "type_mismatch",
    "22008": "type_mismatch",
    "22012": "division_by_zero",
    "57014": "timeout",
    "25P03": "timeout",
    "55P03": "timeout",  # lock_not_available (lock_timeout)
    "53200": "resource_limit",  # out of memory
    "54000": "resource_limit",  # program limit exceeded (e.g. requested length too large)
    "54001": "resource_limit",  # statement too complex
    "42501": "permission_denied",
    "25006": "permission_denied",  # read-only transaction
    "42601": "dialect_error",
    "0A000": "dialect_error",
}
# (pattern, type) for backends that give messages only; the first group names the object.
MESSAGE_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"no such column: ([\w.\"]+)", re.I), "unknown_column"),
    (re.compile(r'Referenced column "?([\w.]+)"? not found', re.I), "unknown_column"),
    (re.compile(r'column "?([\w.]+)"? does not exist', re.I), "unknown_column"),
    (re.compile(r"no such table: ([\w.\"]+)", re.I), "unknown_table"),
    (re.compile(r"Table with name ([\w.\"]+) does not exist", re.I), "unknown_table"),
    (re.compile(r"ambiguous column name: ([\w.\"]+)", re.I), "ambiguous_column"),
    (re.compile(r'Ambiguous reference to column name "?([\w.]+)"?', re.I), "ambiguous_column"),
    (re.compile(r"(Conversion Error|Could not convert|datatype mismatch|No function matches)",
                re.I), "type_mismatch"),
    (re.compile(r"(division by zero|divide by zero)", re.I), "division_by_zero"),
    (re.compile(r"(interrupted|wall-clock limit|INTERRUPT|statement timeout)", re.I), "timeout"),
    (re.compile(r"(string or blob too big|out of memory|Out of Memory Error)", re.I),
     "resource_limit"),
    (re.compile(r"(a value could not be read|OverflowError|too large to convert)", re.I),
     "unreadable_value"),
    (re.compile(r"(not authorized|permission denied|read-only|readonly)", re.I),
     "permission_denied"),
    (re.compile(r"(syntax error|Parser Error|no such function: [\w]+)", re.I), "dialect_error"),
]  # fmt: skip

HINTS = {
    "unknown_column": "Use a column that exists; see tables_with_column.",
    "unknown_table": "Use a table that exists; see closest.",
    "ambiguous_column": "Qualify the column with its table alias.",
    "type_mismatch": "Compare values of the same type: cast one side (CAST(x AS …)).",
    "division_by_zero": "Guard the divisor: x / NULLIF(y, 0).",
    "timeout": "Make the query cheaper: filter earlier, aggregate before joining, add LIMIT.",
    "permission_denied": "Only SELECT on the granted tables is allowed.",
    "dialect_error": "Write the query in the database's dialect; see suggestion.",
    "resource_limit": "The query needed more memory, CPU or value size than allowed: filter "
    "earlier, aggregate before joining, or return fewer and smaller values.",
    "cancelled": "The query was cancelled from outside the run; retry it.",
    "connection_lost": "The connection or the worker running the query was lost; retry it.",
    "unreadable_value": "The database returned a value the client cannot represent: cast it to "
    "text in the query (CAST(x AS TEXT)), or leave it out.",
    "unknown": "Read the database's message and fix the query.",
}
_DIALECTS = ("postgres", "mysql", "tsql", "bigquery", "snowflake", "sqlite", "duckdb", "oracle")


def _object_name(message: str) -> str | None:
    for pattern, _ in MESSAGE_PATTERNS:
        match = pattern.search(message)
        if match and match.groups():
            return match.group(1).strip('"')
    match = re.search(r'(?:column|relation|table) "([^"]+)"', message)
    return match.group(1) if match else None


def _transpiled(sql: str, target: str) -> str | None:
    """The statement read as the first other dialect that parses it, written in `target`."""
    for dialect in _DIALECTS:
        if dialect == target:
            continue
        try:
            out = sqlglot.transpile(sql, read=dialect, write=target)
        except (SqlglotError, RecursionError, ValueError):
            continue
        if len(out) == 1 and out[0].strip() and out[0].strip() != sql.strip():
            return out[0]
    return None


def _close_columns(graph: SchemaGraph, sql: str, name: str) -> list[str]:
    """The columns nearest `name` among the tables the SQL reads (all tables when it reads none
    the graph has, or does not parse), as `table.column`, the closest first."""
    tables = _tables_read(graph, sql) or graph.tables
    columns = {f"{t.name}.{c.name}": c.name.lower() for t in tables for c in t.columns}
    near = get_close_matches(name.lower(), sorted(set(columns.values())), n=3, cutoff=0.6)
    # The closest first: difflib gives them best first, each with every table that has it.
    return [full for bare in near for full, col in columns.items() if col == bare][:3]


def _tables_read(graph: SchemaGraph, sql: str) -> list[Table]:
    """The graph's tables the SQL's FROM and JOIN name (quoted names too), not any word of it."""
    try:
        tree = sqlglot.parse_one(sql, read=graph.dialect or None)
    except (SqlglotError, RecursionError, ValueError):
        return []
    found = []
    for node in tree.find_all(exp.Table):
        table = graph.table(f"{node.db}.{node.name}" if node.db else node.name)
        if table is not None and table not in found:
            found.append(table)
    return found


def classify(
    backend: str,
    message: str,
    sqlstate: str | None,
    *,
    graph: SchemaGraph | None = None,
    sql: str = "",
    explain_summary: str | None = None,
) -> SqlProblem:
    kind = POSTGRES_STATES.get(sqlstate or "", "") if backend == "postgres" else ""
    if not kind:
        kind = next((k for pattern, k in MESSAGE_PATTERNS if pattern.search(message)), "unknown")
    if sqlstate == "57014":
        kind = "timeout"
    first_line = message.strip().splitlines()[0] if message.strip() else ""
    text = first_line[:500] if kind != "unknown" else message[:500]
    details: dict[str, object] = {"backend": backend}
    if sqlstate:
        details["sqlstate"] = sqlstate
    name = _object_name(message)
    hint = HINTS[kind]
    if graph is not None and name:
        bare = name.split(".")[-1]
        if kind == "unknown_column":
            where = tables_with_column(graph, bare)
            details["tables_with_column"] = where
            if where:
                hint = f"{bare} exists in {', '.join(where[:8])}."
            elif close := _close_columns(graph, sql, bare):
                # As `check` says it: the nearest columns of the tables the query reads.
                details["closest"] = close
                hint = f"Did you mean {', '.join(close)}?"
        elif kind == "unknown_table":
            names = [t.name for t in graph.tables]
            close = get_close_matches(name, names, n=3, cutoff=0.5) or get_close_matches(
                bare, [n.rsplit(".", 1)[-1] for n in names], n=3, cutoff=0.5
            )
            details["closest"] = close
            if close:
                hint = f"Did you mean {', '.join(close)}?"
        elif kind == "ambiguous_column":
            details["candidates"] = tables_with_column(graph, bare)
    if kind == "type_mismatch" and graph is not None and sql:
        details["column_types"] = _column_types(sql, graph)
    if kind == "dialect_error" and sql:
        suggestion = _transpiled(sql, {"postgres": "postgres"}.get(backend, backend))
        if suggestion:
            details["suggestion"] = suggestion
    if kind == "timeout" and explain_summary:
        details["explain"] = explain_summary
    return SqlProblem.of(kind, text, hint, **details)


def _column_types(sql: str, graph: SchemaGraph) -> dict[str, str]:
    """Declared types of the columns a query names, where the name is unambiguous."""
    try:
        tree = sqlglot.parse_one(sql, read=graph.dialect or None)
    except (SqlglotError, RecursionError):
        return {}
    types = {}
    for column in tree.find_all(sqlglot.exp.Column):
        holders = [t for t in graph.tables if t.column(column.name)]
        if len(holders) == 1:
            col = holders[0].column(column.name)
            assert col is not None
            types[f"{holders[0].name}.{col.name}"] = col.type
    return types
