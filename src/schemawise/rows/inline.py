"""`sw_match(table, 'text')` inside generated SQL: rewritten, before execution, into the hybrid
search as a subquery with bound parameters, so a model never handles vectors or tenants.

    SELECT a.title FROM recruiting.assignments a
    WHERE a.status = 'open' AND sw_match('recruiting.assignments', 'healthcare')

becomes `… AND a.assignment_id IN (SELECT key FROM (<hybrid search>) sw_1)`. Only the
`sw_match(…)` span of the caller's text is replaced; the rest stays as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import psycopg
import sqlglot
from psycopg import sql as pgsql
from sqlglot import TokenType, exp
from sqlglot.errors import SqlglotError

from schemawise.errors import SchemawiseError
from schemawise.index.embed import get_embedder
from schemawise.rows.config import load_config, qualified
from schemawise.rows.search import SearchSettings, _filters, search_sql

FUNCTION = "sw_match"
# Each call becomes a hybrid search subquery: a handful is plenty for one question, and the cap
# bounds the work done before the deadline starts counting.
MAX_CALLS = 8
# Rows one call may return: a search past this many is a scan, not a match.
MAX_K = 10_000


@dataclass
class Rewritten:
    sql: str  # with %(name)s placeholders, for execution with `params`
    params: dict[str, Any] = field(default_factory=dict)
    literal_sql: str = ""  # every parameter inlined as a literal, for validation and EXPLAIN
    matches: int = 0


def has_sw_match(sql: str) -> bool:
    return FUNCTION in sql.lower()


def _calls(sql: str) -> list[tuple[int, int]]:
    """(start, end) character spans of each `sw_match( … )` call in the text, in one pass
    over the tokens (a stack of open parentheses), refusing more than MAX_CALLS."""
    tokens = sqlglot.tokenize(sql, read="postgres")
    spans = []
    open_calls: list[tuple[int, int]] = []  # (depth at which the call's parenthesis opened, start)
    depth = 0
    for i, token in enumerate(tokens):
        if token.token_type == TokenType.L_PAREN:
            depth += 1
            previous = tokens[i - 1] if i else None
            if previous is not None and previous.text.lower() == FUNCTION:
                open_calls.append((depth, previous.start))
        elif token.token_type == TokenType.R_PAREN:
            if open_calls and open_calls[-1][0] == depth:
                spans.append((open_calls.pop()[1], token.end + 1))
            depth -= 1
    if len(spans) > MAX_CALLS:
        raise SchemawiseError(
            f"The query calls {FUNCTION} {len(spans)} times; at most {MAX_CALLS} are allowed.",
            "Search once per table and reuse the result (a CTE).",
        )
    return sorted(spans)


def _arguments(call: str) -> tuple[str, str, int | None]:
    try:
        node = sqlglot.parse_one(call, read="postgres")
    except SqlglotError as exc:
        raise SchemawiseError(
            f"Cannot read {call!r}.", "Write sw_match('schema.table', 'text')."
        ) from exc
    args = node.expressions if isinstance(node, exp.Anonymous) else []
    if len(args) not in (2, 3) or not all(isinstance(a, exp.Literal) for a in args):
        raise SchemawiseError(
            f"{call} needs literal arguments.",
            "Write sw_match('schema.table', 'what to look for'[, k]).",
        )
    k = _k(call, args[2]) if len(args) == 3 else None
    return args[0].name, args[1].name, k


def _k(call: str, literal: exp.Expr) -> int:
    """The optional row count: a whole number from 1 to MAX_K."""
    text = literal.name
    if literal.is_string or not text.isdigit() or not 1 <= int(text) <= MAX_K:
        raise SchemawiseError(
            f"{call}: k must be a whole number from 1 to {MAX_K:,}.",
            "Write sw_match('schema.table', 'what to look for', 50).",
        )
    return int(text)


def _alias_for(tree: exp.Expr, table: str) -> str:
    found = [
        t.alias_or_name
        for t in tree.find_all(exp.Table)
        if qualified(".".join(p for p in (t.db, t.name) if p)) == table or t.alias_or_name == table
    ]
    if len(set(found)) != 1:
        raise SchemawiseError(
            f"sw_match names {table}, which appears {len(found)} times in the query.",
            "Name the table's alias instead: sw_match('a', 'text').",
        )
    return found[0]


_PLACEHOLDER = re.compile(r"%\((sw\d+_\w+)\)s")


def _inline(text: str, values: dict[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], text)


def _escape_percent(text: str) -> str:
    return text.replace("%", "%%")


def rewrite(conn: psycopg.Connection[Any], sql: str, *, tenant: Any = None) -> Rewritten:
    """Replace every sw_match call; the tenant comes from the caller, never from the text."""
    spans = _calls(sql)
    if not spans:
        return Rewritten(sql, {}, sql, 0)
    pieces: list[str] = []
    literal_pieces: list[str] = []
    params: dict[str, Any] = {}
    cursor = 0
    tree = sqlglot.parse_one(sql, read="postgres")  # once: the calls share it
    for number, (start, end) in enumerate(spans, 1):
        table_arg, text, k = _arguments(sql[start:end])
        alias = _alias_for(tree, table_arg)
        table_name = next(
            qualified(".".join(p for p in (t.db, t.name) if p))
            for t in tree.find_all(exp.Table)
            if t.alias_or_name == alias
        )
        config = load_config(conn, table_name)
        settings = SearchSettings(k=k or 1000, candidates=max(100, k or 1000))
        columns = {r[0] for r in conn.execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0",
            (config.table,),
        ).fetchall()}  # fmt: skip
        where, filter_params = _filters(config, tenant, {}, columns)
        statement = search_sql(config, where, settings, config.threshold, config.gate)
        vector = get_embedder(config.model).embed([text])[0]
        local = {
            "vector": "[" + ",".join(f"{float(v):.7g}" for v in np.asarray(vector)) + "]",
            "text": text,
            "candidates": settings.candidates,
            "threshold": config.threshold,
            "gate": config.gate,
            "k": settings.k,
            **filter_params,
        }
        prefix = f"sw{number}_"
        named = {prefix + key: value for key, value in local.items()}
        rendered = statement.as_string(conn)
        for key in local:
            rendered = rendered.replace(f"%({key})s", f"%({prefix}{key})s")
        rendered = rendered.replace(f"%({prefix}vector)s", f"%({prefix}vector)s::vector")
        subquery = (
            f"{pgsql.Identifier(alias).as_string(conn)}.{config.key().as_string(conn)} IN "
            f"(SELECT key FROM ({rendered}) AS sw_{number})"
        )
        # One pass, so that a searched text which itself reads like a placeholder stays text.
        inlined = {key: pgsql.Literal(value).as_string(conn) for key, value in named.items()}
        literal = _inline(subquery, inlined)
        # The caller's own `%` (LIKE 'a%', modulo) must reach the server as written: with
        # parameters bound, psycopg reads a bare `%` as a placeholder.
        pieces.append(_escape_percent(sql[cursor:start]) + subquery)
        literal_pieces.append(sql[cursor:start] + literal)
        params.update(named)
        cursor = end
    pieces.append(_escape_percent(sql[cursor:]))
    literal_pieces.append(sql[cursor:])
    return Rewritten("".join(pieces), params, "".join(literal_pieces), len(spans))
