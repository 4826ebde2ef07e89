"""Static safety policy (SECURITY.md layers L0–L3): fail closed, refuse with a reason.

Only one read-only query may pass: a SELECT, WITH … SELECT, VALUES, or a set operation of
those, with no function that reaches files, processes, the network, session state or SQL text.
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

from schemawise.validate.problems import SqlProblem

logging.getLogger("sqlglot").setLevel(logging.ERROR)

MAX_SQL_BYTES = 100_000

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

# Functions refused in every dialect, by exact name or by prefix (the names end with `*`).
_DENY_COMMON = (
    "pg_read_file", "pg_read_binary_file", "pg_ls_*", "pg_stat_file", "lo_*", "dblink*",
    "query_to_xml*", "cursor_to_xml*", "table_to_xml*", "schema_to_xml*", "database_to_xml*",
    "pg_sleep*", "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf",
    "pg_rotate_logfile", "set_config", "nextval", "setval", "currval", "lastval", "txid_*",
    "pg_advisory_*", "pg_try_advisory_*", "pg_notify", "pg_logical_*", "pg_replication_*",
    "pg_create_*", "pg_drop_*", "pg_switch_wal", "pg_promote", "pg_backup_*", "pg_file_*",
    "pg_import_system_collations", "pg_stat_reset*", "pg_catalog.*", "load_extension",
    "readfile", "writefile", "edit", "fts3_tokenizer", "sqlite_compileoption_*", "read_*",
    "glob", "*_scan", "sniff_csv", "parquet_*", "iceberg_*", "delta_*", "http_*", "getenv",
    "current_setting", "pg_current_logfile", "inet_server_*", "pg_postmaster_start_time",
    "system", "shell", "exec", "execute", "eval", "xp_*", "sp_*", "sys_exec", "sys_eval",
)  # fmt: skip


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    for pattern in patterns:
        if pattern.endswith("*") and name.startswith(pattern[:-1]):
            return True
        if pattern.startswith("*") and name.endswith(pattern[1:]):
            return True
        if name == pattern:
            return True
    return False


@dataclass
class SafetyResult:
    problems: list[SqlProblem] = field(default_factory=list)
    tree: exp.Expression | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def _refuse(message: str, hint: str, **details: object) -> SafetyResult:
    return SafetyResult([SqlProblem.of("unsafe_statement", message, hint, **details)])


def function_name(node: exp.Func) -> str:
    """The called name, lower-case: `pg_catalog."PG_SLEEP"(1)` → pg_sleep."""
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return node.sql_name().lower()


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


def check_safety(sql: str, dialect: str = "postgres", *, strict: bool = False) -> SafetyResult:
    """Refuse anything but one read-only query; return its parsed tree when it passes."""
    refused = check_input(sql)
    if refused:
        return refused
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except (ParseError, TokenError) as exc:
        errors = getattr(exc, "errors", None) or [{}]
        first = errors[0] if errors else {}
        return SafetyResult(
            [
                SqlProblem.of(
                    "parse_error",
                    f"The SQL does not parse as {dialect}: {str(exc).splitlines()[0][:300]}",
                    "Fix the syntax; one SELECT statement is expected.",
                    line=first.get("line"),
                    col=first.get("col"),
                )
            ]
        )
    except (SqlglotError, RecursionError, ValueError) as exc:
        return _refuse(f"The SQL could not be analysed ({type(exc).__name__}).", "Simplify it.")
    if len(statements) != 1:
        return _refuse(
            f"Exactly one statement is allowed; found {len(statements)}.",
            "Send a single SELECT without a second statement after a semicolon.",
            statements=len(statements),
        )
    tree = statements[0]
    if not isinstance(tree, _ALLOWED_ROOTS):
        kind = tree.key.upper()
        return _refuse(
            f"Only SELECT, WITH … SELECT and VALUES are allowed; this is {kind}.",
            "Rewrite it as a read-only SELECT.",
            statement=kind,
        )
    try:
        nodes = list(tree.walk())
    except RecursionError:
        return _refuse("The SQL nests too deeply to analyse.", "Simplify it.")
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
    problems = [
        SqlProblem.of(
            "forbidden_function",
            f"The function {name}() is not allowed: it reaches files, processes, the network, "
            "session state or executes SQL text.",
            "Remove it; only functions that compute from their arguments are allowed.",
            function=name,
        )
        for name in _forbidden_functions(nodes, strict)
    ]
    return SafetyResult(problems, tree if not problems else None)


# Functions a strict caller allows beyond sqlglot's typed (known, side-effect free) functions.
STRICT_ALLOWED = frozenset(
    {"coalesce", "nullif", "greatest", "least", "strftime", "julianday", "date_part", "now"}
)


def _forbidden_functions(nodes: list[exp.Expr], strict: bool) -> list[str]:
    found: list[str] = []
    for node in nodes:
        if not isinstance(node, exp.Func):
            continue
        name = function_name(node)
        qualified = node.parent if isinstance(node.parent, exp.Dot) else None
        if qualified is not None:
            name = name.split(".")[-1]
        bad = _matches(name, _DENY_COMMON) or (
            strict and isinstance(node, exp.Anonymous) and name not in STRICT_ALLOWED
        )
        if bad and name not in found:
            found.append(name)
    return found
