"""Static safety policy (SECURITY.md layers L0–L3): fail closed, refuse with a reason.

Only one read-only query may pass: a SELECT, WITH … SELECT, VALUES, or a set operation of
those, calling only functions on the dialect's allow-list (validate/functions/*.txt): a
deny-list cannot be complete (ts_stat and ts_rewrite run SQL text, DuckDB's query() too).
This check never "fixes" a statement; the database's own guards (db/guard.py) would still hold
if it had a bug.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, SqlglotError, TokenError

from schemawise.validate.functions import Call, refused_calls
from schemawise.validate.problems import SqlProblem

logging.getLogger("sqlglot").setLevel(logging.ERROR)

MAX_SQL_BYTES = 100_000
# Levels of the parsed tree (SQLite's own expression-depth limit is set to 200 too).
MAX_EXPRESSION_DEPTH = 200

# Statement kinds that may be the root of an allowed query.
_ALLOWED_ROOTS = (exp.Select, exp.Union, exp.Intersect, exp.Except, exp.Values, exp.Subquery)

# Node kinds refused anywhere in the tree (data-modifying CTEs, SELECT INTO, locking, DDL, …).
_FORBIDDEN_NODES: tuple[type[exp.Expression], ...] = tuple(
    getattr(exp, name)
    for name in (
        "Insert", "Update", "Delete", "Merge", "Create", "Drop", "Alter", "AlterTable",
        "Command", "Copy", "Set", "Transaction", "Commit", "Rollback", "Into", "Lock",
        "Pragma", "Use", "Grant", "Revoke", "TruncateTable", "Attach", "Detach", "Install",
        "LoadData", "Analyze", "Describe", "Show", "Kill", "Cache", "Uncache", "Refresh",
    )
    if hasattr(exp, name)
)  # fmt: skip


@dataclass
class SafetyResult:
    problems: list[SqlProblem] = field(default_factory=list)
    tree: exp.Expression | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def _refuse(message: str, hint: str, **details: object) -> SafetyResult:
    return SafetyResult([SqlProblem.of("unsafe_statement", message, hint, **details)])


def expression_depth(tree: exp.Expr) -> int:
    """Levels of the tree, counted without recursion (a deep tree must not overflow here)."""
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in node.iter_expressions())
    return deepest


def check_input(sql: str) -> SafetyResult | None:
    """L0: refuse what no parser should be trusted with."""
    try:
        size = len(sql.encode("utf-8"))
    except UnicodeEncodeError:
        return _refuse("The SQL is not valid UTF-8 text.", "Send plain UTF-8 SQL.")
    if size > MAX_SQL_BYTES:
        return _refuse(
            f"The SQL is {size:,} bytes; the limit is {MAX_SQL_BYTES:,}.",
            "Send one query of reasonable size.",
        )
    if "\x00" in sql:
        return _refuse("The SQL contains a NUL byte.", "Remove control characters.")
    if re.search(r"\bU&\s*['\"]", sql, flags=re.IGNORECASE):
        return _refuse(
            "Unicode escape strings (U&'…' / U&\"…\") are refused: they can hide names.",
            "Write the characters themselves.",
        )
    if any(unicodedata.category(c) in ("Cf", "Cs", "Co") for c in sql):
        return _refuse(
            "The SQL contains invisible or private-use Unicode characters.",
            "Remove formatting characters (zero-width spaces, bidi marks).",
        )
    return None


_LEADING_WORD = re.compile(r"\s*([A-Za-z_]+)")
_STATEMENT_STARTS = ("select", "with", "values", "table", "(")


_TOKEN = re.compile(r"<Token token_type: [^,]*, text: ([^,]*),[^>]*>")
_CLASS = re.compile(r"<class '(?:[\w]+\.)*(\w+)'>")


def _without_internals(description: str) -> str:
    """The parser's words with its objects written as the user's text: `<Token token_type:
    TokenType.WHERE, text: WHERE, …>` becomes 'WHERE'."""
    return _CLASS.sub(r"\1", _TOKEN.sub(r"'\1'", description))


def parse_problem(exc: ParseError | TokenError, sql: str, dialect: str) -> SqlProblem:
    """Where the syntax breaks, in the caller's own text, without the parser's internals
    ("Required keyword: 'expression' missing for <class …Mul>" says nothing to a person)."""
    errors = getattr(exc, "errors", None) or [{}]
    first = errors[0] if errors else {}
    line, col = first.get("line"), first.get("col")
    description = str(first.get("description") or str(exc).splitlines()[0])
    if isinstance(exc, TokenError):
        what = "a quote or comment is not closed"
    elif description.startswith("Required keyword"):
        what = "something is missing here"
    elif description.startswith("Invalid expression / Unexpected token"):
        what = "unexpected word or symbol"
    else:
        what = _without_internals(description)[:200]
    near = str(first.get("start_context") or "")[-30:] + str(first.get("highlight") or "")
    where = f' near "{near.strip()}"' if near.strip() else ""
    at = f" (line {line}, column {col})" if line is not None else ""
    hint = "Fix the syntax; one SELECT statement is expected."
    leading = _LEADING_WORD.match(sql)
    if leading and not sql.lstrip().lower().startswith(_STATEMENT_STARTS):
        hint = (
            f"The statement starts with {leading.group(1)!r}; a query starts with SELECT or WITH."
        )
    return SqlProblem.of(
        "parse_error",
        f"The SQL does not parse as {dialect}{where}{at}: {what}.",
        hint,
        line=line,
        col=col,
    )


def check_safety(sql: str, dialect: str = "postgres") -> SafetyResult:
    """Refuse anything but one read-only query; return its parsed tree when it passes."""
    refused = check_input(sql)
    if refused:
        return refused
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except (ParseError, TokenError) as exc:
        return SafetyResult([parse_problem(exc, sql, dialect)])
    except (SqlglotError, RecursionError, ValueError) as exc:
        return _refuse(f"The SQL could not be analysed ({type(exc).__name__}).", "Simplify it.")
    except (IndexError, TypeError, KeyError, AttributeError) as exc:
        # sqlglot's function builders index their arguments without checking the count
        # (`levenshtein_less_equal()` raised IndexError): L1 refuses, it does not crash.
        return _refuse(f"The SQL could not be analysed ({type(exc).__name__}).", "Simplify it.")
    if len(statements) != 1:
        return _refuse(
            f"Exactly one statement is allowed; found {len(statements)}.",
            "Send a single SELECT without a second statement after a semicolon.",
            statements=len(statements),
        )
    tree = statements[0]
    if not isinstance(tree, _ALLOWED_ROOTS):
        kind = statement_word(tree, sql)
        return _refuse(
            f"Only SELECT, WITH … SELECT and VALUES are allowed; this is {kind}.",
            "Rewrite it as a read-only SELECT.",
            statement=kind,
        )
    try:
        nodes = list(tree.walk())
    except RecursionError:
        return _refuse("The SQL nests too deeply to analyse.", "Simplify it.")
    if (depth := expression_depth(tree)) > MAX_EXPRESSION_DEPTH:
        # The analysis walks up from each column to its scope: its cost grows with the depth,
        # and a chain of 5,000 ORs took 15 s. Real queries stay far below (gold SQL: 15).
        return SafetyResult(
            [
                SqlProblem.of(
                    "unsupported_query",
                    f"The SQL nests {depth} levels deep; at most {MAX_EXPRESSION_DEPTH} are "
                    "checked.",
                    "Write long OR chains as IN (…) lists, and flatten nested subqueries.",
                    depth=depth,
                )
            ]
        )
    for node in nodes:
        if isinstance(node, _FORBIDDEN_NODES):
            kind = "SELECT … INTO" if isinstance(node, exp.Into) else node.key.upper()
            return _refuse(
                f"{kind} is not allowed inside a read-only query.",
                "Remove it: only reads are allowed (no writes, locks, COPY, SET or DDL).",
                statement=kind,
            )
        if isinstance(node, exp.Select) and node.args.get("locks"):
            return _refuse(
                "Locking clauses (FOR UPDATE / FOR SHARE) are not allowed.",
                "Remove the locking clause.",
                statement="FOR UPDATE",
            )
    problems = [_forbidden(call, dialect) for call in refused_calls(nodes, sql, dialect)]
    return SafetyResult(problems, tree if not problems else None)


def _forbidden(call: Call, dialect: str) -> SqlProblem:
    if call.operator:
        why = (
            f"{call.display} is not allowed: only OPERATOR(pg_catalog.…) is sure to name a "
            "built-in operator; any other schema's operator runs a function no list vouches for."
        )
    elif call.qualifier:
        why = (
            f"The function {call.display}() is not allowed: a call may name no schema but the "
            "server's own catalogue (a user schema's function is not on any list)."
        )
    else:
        shown = f'"{call.name}"' if call.quoted else call.name
        why = (
            f"The function {shown}() is not on the {dialect} allow-list of functions that only "
            "compute from their arguments (none that read settings, files, server state or "
            "other sessions, touch sequences, lock, sleep, write or run SQL text)."
        )
    return SqlProblem.of(
        "forbidden_function",
        why,
        "Remove it or use an allowed function (string, math, date/time, aggregate, window, "
        "JSON, array); write its name unquoted and without a schema.",
        function=call.display if call.operator else call.name,
    )


def statement_word(tree: exp.Expr, sql: str) -> str:
    """What kind of statement it is, as its writer would name it: the statement's first word
    after any comments (`EXPLAIN`, `SHOW`, `LISTEN`, `TRUNCATE`: sqlglot parses statements it
    does not model as a command or an alias, and names some nodes its own way); for a statement
    behind `WITH`, its type (`DELETE`)."""
    text = re.sub(r"^(\s|\(|/\*.*?\*/|--[^\n]*(\n|$))*", "", sql, flags=re.DOTALL)
    words = text.split(None, 1)
    first = re.sub(r"\W.*$", "", words[0]).upper() if words else ""
    if first and first != "WITH":
        return first
    return tree.key.upper()
