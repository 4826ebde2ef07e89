"""What a query log says about use: how often each table and column is read, which tables are
read together, and real queries to show as examples. Names are resolved against the graph, so
a log that mentions a dropped table or an alias only counts what still exists."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from itertools import combinations

import sqlglot
from pydantic import BaseModel, Field
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import traverse_scope

from schemawise.graph.infer import QueryLogEntry
from schemawise.graph.model import SchemaGraph

# Example queries kept per set of tables: the shortest, as the clearest.
EXAMPLES_PER_TABLE_SET = 2
MAX_EXAMPLE_CHARS = 600


class LoggedQuery(BaseModel):
    tables: list[str]
    sql: str


class Usage(BaseModel):
    queries: int = 0
    failed: int = 0
    tables: dict[str, int] = Field(default_factory=dict)  # graph table → queries reading it
    columns: dict[str, int] = Field(default_factory=dict)  # `table.column` → queries
    pairs: dict[str, int] = Field(default_factory=dict)  # "a|b" (sorted) → queries with both
    examples: list[LoggedQuery] = Field(default_factory=list)

    def co_use_share(self, table: str, chosen: list[str]) -> float:
        """Of the queries reading `table`, the largest share that also read one of `chosen`."""
        alone = self.tables.get(table, 0)
        if not alone:
            return 0.0
        best = max((self.pairs.get(_pair(table, other), 0) for other in chosen), default=0)
        return best / alone

    def column_count(self, table: str, column: str) -> int:
        return self.columns.get(f"{table}.{column}".lower(), 0)

    def examples_for(self, tables: list[str]) -> list[LoggedQuery]:
        """Logged queries that read only tables among `tables`, most tables covered first."""
        wanted = set(tables)
        fitting = [q for q in self.examples if q.tables and set(q.tables) <= wanted]
        return sorted(fitting, key=lambda q: (-len(q.tables), len(q.sql)))


def _pair(a: str, b: str) -> str:
    return "|".join(sorted((a, b)))


def usage_from_log(entries: Iterable[QueryLogEntry], graph: SchemaGraph) -> Usage:
    usage = Usage()
    tables: Counter[str] = Counter()
    columns: Counter[str] = Counter()
    pairs: Counter[str] = Counter()
    by_set: dict[tuple[str, ...], list[str]] = {}
    for entry in entries:
        read = tables_and_columns(entry.sql, graph)
        if read is None:
            usage.failed += 1
            continue
        usage.queries += entry.calls
        names, cols = read
        # A statement pg_stat_statements saw a thousand times weighs a thousand runs.
        tables.update(dict.fromkeys(names, entry.calls))
        columns.update(dict.fromkeys(cols, entry.calls))
        pairs.update(
            dict.fromkeys((_pair(a, b) for a, b in combinations(sorted(names), 2)), entry.calls)
        )
        if names and len(entry.sql) <= MAX_EXAMPLE_CHARS:
            by_set.setdefault(tuple(sorted(names)), []).append(entry.sql.strip())
    usage.tables, usage.columns, usage.pairs = dict(tables), dict(columns), dict(pairs)
    for key, sqls in sorted(by_set.items()):
        for sql in sorted(set(sqls), key=len)[:EXAMPLES_PER_TABLE_SET]:
            usage.examples.append(LoggedQuery(tables=list(key), sql=sql))
    return usage


def tables_and_columns(sql: str, graph: SchemaGraph) -> tuple[set[str], set[str]] | None:
    try:
        tree = sqlglot.parse_one(sql, read=graph.dialect or None)
        if not isinstance(tree, exp.Query | exp.DML):
            return None  # not a query (sqlglot reads some garbage as an expression)
        scopes = traverse_scope(tree)
    except (SqlglotError, RecursionError, ValueError):
        return None
    names: set[str] = set()
    cols: set[str] = set()
    for scope in scopes:
        aliases: dict[str, str] = {}
        for alias, source in scope.sources.items():
            if not isinstance(source, exp.Table):
                continue
            qualified = ".".join(p for p in (source.db, source.name) if p)
            table = graph.table(qualified) or graph.table(source.name)
            if table is not None:
                aliases[alias] = table.name
                names.add(table.name)
        for column in scope.columns:
            owner = aliases.get(column.table)
            if owner is None and not column.table and len(aliases) == 1:
                owner = next(iter(aliases.values()))
            table = graph.table(owner) if owner else None
            if table is not None and table.column(column.name) is not None:
                cols.add(f"{table.name}.{column.name}".lower())
    return names, cols
