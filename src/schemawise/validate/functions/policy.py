"""Which calls of a parsed query the dialect's allow-list refuses (SECURITY.md L3)."""

from __future__ import annotations

from sqlglot import exp

from schemawise.validate.functions.calls import Call, find_calls
from schemawise.validate.functions.lists import LIST_FILES, function_list

# The only schema a call may name: the server's own catalogue schema. Any other qualifier
# reaches a user schema's function, which no list can vouch for.
_ALLOWED_QUALIFIERS = {
    "postgres": frozenset({("pg_catalog",)}),
    "sqlite": frozenset({("main",)}),
    "duckdb": frozenset({("main",)}),
}


def refused_calls(nodes: list[exp.Expr], sql: str, dialect: str) -> list[Call]:
    """The calls in `nodes` (the parsed tree of `sql`) that are not allowed, first seen first."""
    allowed = function_list(dialect)
    names, syntax = allowed.names, allowed.syntax
    qualifiers = _ALLOWED_QUALIFIERS.get(LIST_FILES.get(dialect.lower(), ""), frozenset())
    refused: list[Call] = []
    for call in find_calls(nodes, sql, dialect, names):
        if call.operator:
            # OPERATOR(pg_catalog.op) reaches only built-in operators, whose functions the walk
            # test examines; unqualified it searches the path, where a user schema's operator
            # may run any function.
            if call.qualifier != ("pg_catalog",) and call not in refused:
                refused.append(call)
            continue
        ok = call.name in names and (not call.qualifier or call.qualifier in qualifiers)
        if ok and call.name in syntax:
            # Grammar (CAST, COALESCE, TRIM …) only as grammar: quoted or qualified, the
            # server looks up a real function by that name instead.
            ok = not call.quoted and not call.qualifier
        if not ok and call not in refused:
            refused.append(call)
    return refused
