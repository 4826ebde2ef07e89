"""Every function a parsed query calls, by the name the DATABASE will call (SECURITY.md L3).

sqlglot normalises calls (`strpos` becomes StrPosition, `date_part` becomes Extract), so its
node names are not what the server looks up. Three sources give the real name:

1. A call sqlglot parsed through its function table keeps the position of the name token
   (`node.meta` start/end): the original text there is the name, quotes and all. This holds
   for nodes that are not Func subclasses too (`mod(a, b)` parses as the operator node Mod).
2. A call sqlglot parsed with a special parser (its FUNCTION_PARSERS: STRING_AGG, POSITION,
   EXTRACT, CAST, …, and IF) keeps no position; the tokens do: every such keyword followed
   by `(` is read from the token stream with its quoting and qualifier.
3. A node with neither came from grammar (CASE, AND, operators, CURRENT_DATE) or from inside
   another call's translation; it is accepted only when its sqlglot name is on the dialect's
   list or it is one of the known grammar nodes below, else refused by that name.

A name token that the parser did not turn into a call at all (`overlaps(a, b, c, d)` parses
as a column with aliases, yet the server calls the function) is caught by looking at what
follows every identifier: an identifier directly followed by `(` is a call.

Postgres's `OPERATOR(schema.op)` names an operator, and so the function behind it: it is
reported as an operator call with its schema, which only pg_catalog may be.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokenizer_core import Token, TokenType

# Leaves the parser gives a position (strings, numbers, names, *) that are never calls.
# Kept to exactly these: any other positioned node is read as a call, failing closed.
_POSITIONED_LEAVES: tuple[type[exp.Expr], ...] = (
    exp.Identifier, exp.Literal, exp.Star, exp.RawString, exp.National, exp.UnicodeString,
    exp.BitString, exp.ByteString, exp.HexString,
)  # fmt: skip

# Grammar that sqlglot models as Func nodes without a name token: CASE, EXISTS, ARRAY[…],
# ROW(…), and the nodes its special parsers build for calls whose real name the token pass
# checks (POSITION → StrPosition, STRING_AGG → GroupConcat, json_agg → JSONArrayAgg, …) or
# that another call's builder nests inside itself (strftime → TsOrDsToTimestamp).
_GRAMMAR_NODES: tuple[type[exp.Expr], ...] = (
    exp.Case, exp.If, exp.Exists, exp.Array, exp.Struct, exp.StrPosition, exp.GroupConcat,
    exp.JSONArrayAgg, exp.JSONObject, exp.Chr, exp.PercentileCont, exp.PercentileDisc,
    exp.TsOrDsToTimestamp, exp.TsOrDsToDate,
    exp.MatchAgainst,  # Postgres's text-search operator @@
)  # fmt: skip

# Operators are syntax, not calls by name (SECURITY.md L3: operators are examined separately
# against pg_operator in the walk test).
_OPERATOR_NODES: tuple[type[exp.Expr], ...] = (exp.Binary, exp.Unary)

# Tokens after which a word followed by `(` is a type with modifiers, not a call:
# CAST(x AS char(3)), x::numeric(10, 2).
_TYPE_CONTEXT = frozenset({TokenType.ALIAS, TokenType.DCOLON})

_SPACE_OR_COMMENT = re.compile(r"(?:\s+|--[^\n]*|/\*.*?\*/)*", re.DOTALL)


@dataclass(frozen=True)
class Call:
    """One function call: its name as the server will look it up (lower case unless quoted
    in a case-sensitive dialect), whether it was quoted, and any schema qualifier."""

    name: str
    quoted: bool = False
    qualifier: tuple[str, ...] = ()
    operator: bool = False  # OPERATOR(schema.op): `name` is the operator symbol

    @property
    def display(self) -> str:
        shown = ".".join((*self.qualifier, self.name))
        return f"OPERATOR({shown})" if self.operator else shown


@cache
def _dialect(dialect: str) -> Dialect:
    return Dialect.get_or_raise(dialect)


# Keywords sqlglot parses specially that are grammar when `(` follows: CASE (x) WHEN …,
# x = ANY (…), f(VARIADIC (…)). Every other specially parsed word before `(` is a call.
# SQLite reserves only CASE: there `any(x)` is a call to a function named any.
_GRAMMAR_KEYWORDS = frozenset({"CASE", "ANY", "VARIADIC"})
_SQLITE_GRAMMAR_KEYWORDS = frozenset({"CASE"})


@cache
def _special_parsers(dialect: str) -> frozenset[str]:
    parser = _dialect(dialect).parser_class
    keys = set(parser.FUNCTION_PARSERS) | set(parser.NO_PAREN_FUNCTION_PARSERS)
    grammar = _SQLITE_GRAMMAR_KEYWORDS if dialect.lower() == "sqlite" else _GRAMMAR_KEYWORDS
    return frozenset(keys - grammar)


def _case_sensitive(dialect: str) -> bool:
    # Postgres folds unquoted names to lower case and keeps quoted ones exactly; SQLite and
    # DuckDB look functions up without regard to case.
    return dialect.lower() in ("postgres", "postgresql")


def _name(text: str, quoted: bool, dialect: str) -> str:
    return text if quoted and _case_sensitive(dialect) else text.lower()


def _unquote(text: str, dialect: str) -> tuple[str, bool]:
    """The name token's source text → (name, quoted)."""
    text = text.strip()
    pairs = {'"': '"', "`": "`", "[": "]"}
    if len(text) >= 2 and text[0] in pairs and text[-1] == pairs[text[0]]:
        close = pairs[text[0]]
        inner = text[1:-1].replace(close * 2, close)
        return _name(inner, True, dialect), True
    return text.lower(), False


def _parts(node: exp.Expr | None, dialect: str) -> tuple[str, ...]:
    """Names of a qualifier expression (`a.b` → ("a", "b")); anything else is opaque."""
    if node is None:
        return ()
    if isinstance(node, exp.Identifier):
        return (_name(node.name, bool(node.args.get("quoted")), dialect),)
    if isinstance(node, exp.Dot):
        return _parts(node.this, dialect) + _parts(node.expression, dialect)
    if isinstance(node, exp.Column | exp.Table):
        keys = ("catalog", "db", "table", "this")
        return tuple(p for key in keys for p in _parts(node.args.get(key), dialect))
    # A call on an expression (DuckDB's `'a'.lower()`) has no schema: never an allowed one.
    return ("<expression>",)


def _qualifier(node: exp.Expr, dialect: str) -> tuple[str, ...]:
    parent = node.parent
    if isinstance(parent, exp.Dot) and parent.expression is node:
        return _parts(parent.this, dialect)
    if isinstance(parent, exp.Table) and parent.this is node:
        return _parts(parent.args.get("catalog"), dialect) + _parts(parent.args.get("db"), dialect)
    if isinstance(parent, exp.Column) and parent.this is node:
        return tuple(
            p for key in ("catalog", "db", "table") for p in _parts(parent.args.get(key), dialect)
        )
    return ()


def _followed_by_paren(sql: str, end: int) -> bool:
    rest = _SPACE_OR_COMMENT.match(sql, end + 1)
    position = rest.end() if rest else end + 1
    return sql.startswith("(", position)


def _operator_call(node: exp.Operator) -> Call:
    """`OPERATOR(public.===)`: sqlglot keeps `public.===` as text (quotes dropped)."""
    text = str(node.args.get("operator") or "")
    schema, _, symbol = text.rpartition(".")
    qualifier = tuple(part.strip('"').lower() for part in schema.split(".")) if schema else ()
    return Call(symbol, False, qualifier, operator=True)


def _tree_calls(nodes: list[exp.Expr], sql: str, dialect: str, names: frozenset[str]) -> list[Call]:
    calls: list[Call] = []
    for node in nodes:
        meta = node.meta
        start, end = meta.get("start"), meta.get("end")
        span = (start, end) if isinstance(start, int) and isinstance(end, int) else None
        if isinstance(node, exp.Identifier):
            # An identifier the parser kept as a column or table although the server will
            # call it: `overlaps(a, b, c, d)`. Alias column lists (`AS t(a, b)`) are not calls.
            if (
                span is not None
                and isinstance(node.parent, exp.Column | exp.Table)
                and node.parent.this is node
                and _followed_by_paren(sql, span[1])
            ):
                name = _name(node.name, bool(node.args.get("quoted")), dialect)
                calls.append(
                    Call(name, bool(node.args.get("quoted")), _qualifier(node.parent, dialect))
                )
            continue
        if isinstance(node, _POSITIONED_LEAVES):
            continue
        if isinstance(node, exp.Operator):
            calls.append(_operator_call(node))
            continue
        if span is not None:
            name, quoted = _unquote(sql[span[0] : span[1] + 1], dialect)
            calls.append(Call(name, quoted, _qualifier(node, dialect)))
        elif isinstance(node, exp.Func) and not isinstance(node, _OPERATOR_NODES):
            name = node.sql_name().lower()
            if name in names or isinstance(node, _GRAMMAR_NODES):
                qualifier = _qualifier(node, dialect)
                if qualifier:  # `public.string_agg(…)`: the qualifier still counts
                    calls.append(Call(name, False, qualifier))
                continue
            calls.append(Call(name, False, _qualifier(node, dialect)))
    return calls


def _token_qualifier(tokens: list[Token], index: int, dialect: str) -> tuple[str, ...]:
    parts: list[str] = []
    i = index - 1
    while i >= 1 and tokens[i].token_type == TokenType.DOT:
        token = tokens[i - 1]
        parts.insert(0, _name(token.text, token.token_type == TokenType.IDENTIFIER, dialect))
        i -= 2
    return tuple(parts)


def _token_calls(sql: str, dialect: str) -> list[Call]:
    """Calls that sqlglot's special parsers build without a name position, read from the
    tokens: the keyword (or quoted name) directly followed by `(`."""
    keys = _special_parsers(dialect)
    upper = sql.upper()
    if not any(key in upper for key in keys):
        return []
    tokens = _dialect(dialect).tokenize(sql)
    calls: list[Call] = []
    for i, token in enumerate(tokens[:-1]):
        if tokens[i + 1].token_type != TokenType.L_PAREN or token.text.upper() not in keys:
            continue
        if i > 0 and tokens[i - 1].token_type in _TYPE_CONTEXT:
            continue
        quoted = token.token_type == TokenType.IDENTIFIER
        calls.append(
            Call(_name(token.text, quoted, dialect), quoted, _token_qualifier(tokens, i, dialect))
        )
    return calls


def find_calls(nodes: list[exp.Expr], sql: str, dialect: str, names: frozenset[str]) -> list[Call]:
    """Every call in the parsed query `nodes` of `sql`. `names` is the dialect's allow-list:
    grammar nodes whose sqlglot name is on it need no further reading."""
    return _tree_calls(nodes, sql, dialect, names) + _token_calls(sql, dialect)
