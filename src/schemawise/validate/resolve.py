"""Resolve every table and column of a query against the graph, through CTEs, subqueries,
aliases, USING, NATURAL and `*` (sqlglot's qualify does the scoping)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from difflib import get_close_matches

from sqlglot import exp
from sqlglot.errors import OptimizeError, SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, traverse_scope
from sqlglot.schema import MappingSchema

from schemawise.graph.model import SchemaGraph, Table
from schemawise.validate.problems import SqlProblem

_UNKNOWN_COLUMN = re.compile(r"Unknown column: (.+)$")
_AMBIGUOUS = re.compile(r"Ambiguous column:? '?([^' (]+)")
CASE_INSENSITIVE_DIALECTS = frozenset({"sqlite", "duckdb"})
# Columns removed to find further problems after the first: a query rarely has more.
MAX_PROBLEMS = 10


@dataclass
class Resolution:
    problems: list[SqlProblem] = field(default_factory=list)
    # The qualified copy of the tree (None when tables are unknown); never executed.
    tree: exp.Expression | None = None
    # alias → graph table name, per scope of the qualified tree
    tables: list[str] = field(default_factory=list)
    columns: list[tuple[str, str]] = field(default_factory=list)


def _table_key(table: Table, dialect: str) -> tuple[str, ...]:
    parts = (
        table.name.split(".", 1) if dialect == "postgres" and "." in table.name else [table.name]
    )
    return tuple(parts)


def graph_schema(graph: SchemaGraph) -> MappingSchema:
    """The graph as sqlglot's schema; Postgres names nest as schema → table."""
    mapping: dict[str, object] = {}
    for table in graph.tables:
        columns = {c.name: (c.type or "text") for c in table.columns}
        if graph.dialect == "postgres" and "." in table.name:
            schema, name = table.name.split(".", 1)
            mapping.setdefault(schema, {})[name] = columns  # type: ignore[index]
        else:
            mapping[table.name] = columns
    try:
        return MappingSchema(mapping, dialect=graph.dialect or None, normalize=True)
    except SqlglotError:
        # Names that differ only by case: fall back to an exact-case schema.
        return MappingSchema(mapping, dialect=graph.dialect or None, normalize=False)


def find_table(graph: SchemaGraph, node: exp.Table) -> Table | None:
    """The graph table a FROM item names: `schema.table`, or a bare name as the database
    finds it. Postgres looks a bare name up on the search path, which guarded runs set to
    pg_catalog, public (db/pg_guard.py): `orders` is `public.orders`, never `sales.orders`
    (`unqualified_elsewhere` names that one). Elsewhere a bare name that is unique."""
    name = node.name
    if node.db:
        return graph.table(f"{node.db}.{name}")
    if graph.dialect == "postgres":
        found = graph.table(f"public.{name}")
        if found is not None:
            return found
        bare = graph.table(name)
        # A table the graph names without a schema (a source read without schemas) is found
        # as it is; one in another schema is not on the search path.
        return bare if bare is not None and "." not in bare.name else None
    return graph.table(name)


def unqualified_elsewhere(graph: SchemaGraph, node: exp.Table) -> list[str]:
    """The tables of other schemas a bare Postgres name matches (`orders` → sales.orders)."""
    if node.db or graph.dialect != "postgres":
        return []
    lowered = node.name.lower()
    return [t.name for t in graph.tables if t.name.lower().rsplit(".", 1)[-1] == lowered]


def _cte_names(tree: exp.Expression) -> set[str]:
    return {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}


def _unknown_tables(tree: exp.Expression, graph: SchemaGraph) -> list[SqlProblem]:
    ctes = _cte_names(tree)
    problems = []
    for node in tree.find_all(exp.Table):
        if not node.name or (not node.db and node.name.lower() in ctes):
            continue
        if isinstance(node.this, exp.Func) or find_table(graph, node) is not None:
            continue
        written = ".".join(p for p in (node.db, node.name) if p)
        if _system_catalog(node):
            problems.append(
                SqlProblem.of(
                    "unknown_table",
                    f"Table {written} is a system catalog, not one of the database's tables: "
                    "queries read only the tables of the schema graph.",
                    "Ask about the data; for the server's own state use psql as an administrator.",
                    table=written,
                    closest=[],
                )
            )
            continue
        if elsewhere := unqualified_elsewhere(graph, node):
            problems.append(
                SqlProblem.of(
                    "unknown_table",
                    f"Table {written} is not on the search path (public): "
                    f"{' and '.join(elsewhere)} {'is' if len(elsewhere) == 1 else 'are'} in "
                    "another schema.",
                    f"Write the schema with the name: {elsewhere[0]}.",
                    table=written,
                    closest=elsewhere,
                )
            )
            continue
        names = [t.name for t in graph.tables]
        bare = [n.rsplit(".", 1)[-1] for n in names]
        close = get_close_matches(written, names, n=3, cutoff=0.6) or [
            names[bare.index(m)] for m in get_close_matches(node.name, bare, n=3, cutoff=0.6)
        ]
        problems.append(
            SqlProblem.of(
                "unknown_table",
                f"Table {written} does not exist.",
                f"Did you mean {', '.join(close)}?" if close else "List tables with `graph`.",
                table=written,
                closest=close,
            )
        )
    return problems


def _system_catalog(node: exp.Table) -> bool:
    """`pg_stat_activity`, `information_schema.tables`, `sqlite_master`: the server's own
    tables, which the graph never holds (it is not that they do not exist)."""
    schema, name = (node.db or "").lower(), node.name.lower()
    return (
        schema in ("pg_catalog", "information_schema")
        or (not schema and name.startswith(("pg_", "sqlite_")))
        or name in ("sqlite_master", "sqlite_schema", "duckdb_tables", "duckdb_columns")
    )


def _literalise_quoted_strings(tree: exp.Expression, graph: SchemaGraph) -> None:
    """SQLite reads a double-quoted name that matches no column as a string literal."""
    known = {c.name.lower() for t in graph.tables for c in t.columns}
    for column in list(tree.find_all(exp.Column)):
        quoted = isinstance(column.this, exp.Identifier) and column.this.quoted
        if quoted and not column.table and column.name.lower() not in known:
            column.replace(exp.Literal.string(column.name))


def tables_with_column(graph: SchemaGraph, column: str) -> list[str]:
    lowered = column.lower()
    return [t.name for t in graph.tables if any(c.name.lower() == lowered for c in t.columns)]


def _unknown_column(
    graph: SchemaGraph,
    name: str,
    alias: str | None,
    in_scope: list[str],
    read_from: str | None = None,
    read_as: dict[str, str] | None = None,
) -> SqlProblem:
    """`in_scope`: the columns the query could have meant (of the alias's table, or of every
    table it reads), for a did-you-mean; `read_from`: the table the alias names, if any;
    `read_as`: graph table → the alias the query reads it as."""
    where = tables_with_column(graph, name)
    # The table that has the column is already in the query: name the fix to copy, which a
    # small model follows where "join that table" sends it joining the table again.
    joined = [(t, (read_as or {})[t]) for t in where if t in (read_as or {})]
    written = f"{alias}.{name}" if alias else name
    by_lower = {c.lower(): c for c in in_scope}
    closest = [by_lower[c] for c in get_close_matches(name.lower(), list(by_lower), n=3)]
    if by_lower.get(name.lower(), name) != name:
        # Only the letter case differs: a quoted name ("Name") keeps its case in Postgres.
        hint = (
            f"Quoted names are case-sensitive: the column is {by_lower[name.lower()]} "
            "(write it unquoted, or quoted exactly so)."
        )
    elif joined:
        table, holder = joined[0]
        hint = (
            f"{name} is a column of {table}, which this query reads as {holder}: "
            f"write {holder}.{name}."
        )
    elif where:
        hint = f"{name} exists in {', '.join(where[:8])}: join that table or qualify the column."
    elif closest:
        hint = f"Did you mean {' or '.join(closest)}?"
    else:
        hint = "Check the column list of the tables in FROM (`graph` shows them)."
    return SqlProblem.of(
        "unknown_column",
        f"Column {written} does not exist in the tables this query reads.",
        hint,
        column=name,
        tables_with_column=where,
        closest=closest,
        **({"read_from": read_from} if read_from else {}),
    )


def _columns_of(scope: Scope, graph: SchemaGraph, alias: str | None) -> list[str]:
    """Columns of the table behind `alias`, or of every table the scope reads."""
    names: list[str] = []
    for name, (_, source) in scope.selected_sources.items():
        if alias is not None and name != alias:
            continue
        table = find_table(graph, source) if isinstance(source, exp.Table) else None
        if table is not None:
            names += [c.name for c in table.columns]
    return names


def _read_as(scope: Scope, graph: SchemaGraph) -> dict[str, str]:
    """Graph table → the alias this scope reads it as (the first, when read twice)."""
    out: dict[str, str] = {}
    for alias, (_, source) in scope.selected_sources.items():
        table = find_table(graph, source) if isinstance(source, exp.Table) else None
        if table is not None:
            out.setdefault(table.name, alias)
    return out


def _table_of(scope: Scope, graph: SchemaGraph, alias: str) -> str | None:
    """The graph's name of the table behind `alias` (None for a subquery or CTE)."""
    entry = scope.selected_sources.get(alias)
    if entry is None or not isinstance(entry[1], exp.Table):
        return None
    table = find_table(graph, entry[1])
    return table.name if table is not None else None


def _scope_problems(scope: Scope, graph: SchemaGraph) -> list[SqlProblem]:
    problems = []
    sources = scope.selected_sources
    for column in scope.unqualified_columns:
        holders = [
            alias
            for alias, (_, source) in sources.items()
            if isinstance(source, exp.Table)
            and (t := find_table(graph, source)) is not None
            and t.column(column.name) is not None
        ]
        if len(holders) > 1:
            problems.append(
                SqlProblem.of(
                    "ambiguous_column",
                    f"Column {column.name} is in several tables of this query: "
                    f"{', '.join(holders)}.",
                    f"Qualify it, e.g. {holders[0]}.{column.name}.",
                    column=column.name,
                    candidates=holders,
                )
            )
        else:
            problems.append(
                _unknown_column(
                    graph,
                    column.name,
                    None,
                    _columns_of(scope, graph, None),
                    read_as=_read_as(scope, graph),
                )
            )
    if scope.external_columns and not scope.is_correlated_subquery:
        for column in scope.external_columns:
            if column.table and column.table not in scope.sources:
                problems.append(
                    SqlProblem.of(
                        "unknown_table",
                        f"{column.table}.{column.name} names {column.table}, which is not a "
                        "table or alias in this query.",
                        f"Use one of: {', '.join(scope.sources) or 'the tables in FROM'}.",
                        table=column.table,
                        closest=list(scope.sources),
                    )
                )
            elif column.table:
                problems.append(
                    _unknown_column(
                        graph,
                        column.name,
                        column.table,
                        _columns_of(scope, graph, column.table),
                        _table_of(scope, graph, column.table),
                        _read_as(scope, graph),
                    )
                )
    return problems


def resolve(tree: exp.Expression, graph: SchemaGraph) -> Resolution:
    """Qualify a copy of `tree`; report unknown tables, unknown and ambiguous columns."""
    result = Resolution()
    result.problems = _unknown_tables(tree, graph)
    if result.problems:
        return result
    work = tree.copy()
    if graph.dialect == "sqlite":
        _literalise_quoted_strings(work, graph)
    if graph.dialect in CASE_INSENSITIVE_DIALECTS:
        # "Name" and name are the same column in SQLite and DuckDB, quoted or not.
        for identifier in work.find_all(exp.Identifier):
            identifier.set("this", str(identifier.this).lower())
    schema = graph.cached("sqlglot_schema", graph_schema)
    for _ in range(MAX_PROBLEMS):
        try:
            qualified = qualify(
                work.copy(),
                schema=schema,
                dialect=graph.dialect or None,
                validate_qualify_columns=False,
                quote_identifiers=False,
                identify=False,
            )
            break
        except OptimizeError as exc:
            problem, name = _from_optimize_error(str(exc), graph, work)
            result.problems.append(problem)
            if name is None:
                return result
            # Take the offending column out and look for the next problem.
            for column in list(work.find_all(exp.Column)):
                if column.name.lower() == name.lower():
                    column.replace(exp.Null())
        except (SqlglotError, RecursionError, KeyError, ValueError) as exc:
            result.problems.append(
                SqlProblem.of(
                    "parse_error",
                    f"The query could not be resolved: {str(exc)[:200]}",
                    "Simplify the query.",
                )
            )
            return result
    else:
        return result
    for scope in traverse_scope(qualified):
        result.problems.extend(_scope_problems(scope, graph))
    result.tree = qualified
    seen_tables: list[str] = []
    for node in qualified.find_all(exp.Table):
        table = find_table(graph, node)
        if table is not None and table.name not in seen_tables:
            seen_tables.append(table.name)
    result.tables = seen_tables
    return result


def _columns_read(tree: exp.Expr, graph: SchemaGraph) -> list[str]:
    """Columns of every table the query reads, for a did-you-mean."""
    names: list[str] = []
    for node in tree.find_all(exp.Table):
        table = find_table(graph, node)
        if table is not None:
            names += [c.name for c in table.columns if c.name not in names]
    return names


def _qualifier(tree: exp.Expr, graph: SchemaGraph, name: str) -> tuple[str | None, str | None]:
    """The alias a column named `name` is written with, and the graph table that alias names
    (None, None when it is written bare or the alias is a subquery's)."""
    for column in tree.find_all(exp.Column):
        if column.name.lower() != name.lower() or not column.table:
            continue
        for node in tree.find_all(exp.Table):
            if node.alias_or_name.lower() == column.table.lower():
                table = find_table(graph, node)
                return column.table, table.name if table is not None else None
        return column.table, None
    return None, None


def _from_optimize_error(
    message: str, graph: SchemaGraph, work: exp.Expr
) -> tuple[SqlProblem, str | None]:
    if match := _UNKNOWN_COLUMN.search(message.splitlines()[0]):
        name = match.group(1).strip().strip('"')
        alias, read_from = _qualifier(work, graph, name)
        in_scope = _columns_read(work, graph)
        if read_from is not None and (table := graph.table(read_from)) is not None:
            in_scope = [c.name for c in table.columns]
        read_as: dict[str, str] = {}
        for node in work.find_all(exp.Table):
            if (found := find_table(graph, node)) is not None:
                read_as.setdefault(found.name, node.alias_or_name)
        return _unknown_column(graph, name, alias, in_scope, read_from, read_as), name
    if match := _AMBIGUOUS.search(message):
        name = match.group(1).strip('"')
        return (
            SqlProblem.of(
                "ambiguous_column",
                f"Column {name} is in several tables of this query.",
                "Qualify it with its table's alias.",
                column=name,
            ),
            name,
        )
    return (
        SqlProblem.of("parse_error", f"The query could not be resolved: {message[:200]}", ""),
        None,
    )
