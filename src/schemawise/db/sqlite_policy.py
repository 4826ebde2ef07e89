"""SQLite's own guards: an authorizer that allows reads and known functions only, and limits."""

from __future__ import annotations

import sqlite3

# Built-in scalar, aggregate, window, date, math and JSON functions that only compute.
ALLOWED_FUNCTIONS = frozenset(
    (
        "abs", "avg", "changes", "char", "coalesce", "concat", "concat_ws", "count",
        "cume_dist", "date", "datetime", "dense_rank", "first_value", "format", "glob",
        "group_concat", "hex", "ifnull", "iif", "instr", "julianday", "lag", "last_value",
        "lead", "length", "like", "likelihood", "likely", "lower", "ltrim", "max", "min",
        "nth_value", "ntile", "nullif", "octet_length", "percent_rank", "printf", "quote",
        "random", "rank", "replace", "round", "row_number", "rtrim", "sign", "soundex",
        "string_agg", "strftime", "substr", "substring", "sum", "time", "timediff", "total",
        "trim", "typeof", "unhex", "unicode", "unixepoch", "unlikely", "upper", "acos",
        "acosh", "asin", "asinh", "atan", "atan2", "atanh", "ceil", "ceiling", "cos",
        "cosh", "degrees", "exp", "floor", "ln", "log", "log10", "log2", "mod", "pi", "pow",
        "power", "radians", "sin", "sinh", "sqrt", "tan", "tanh", "trunc", "json",
        "json_array", "json_array_length", "json_extract", "json_insert", "json_object",
        "json_patch", "json_quote", "json_remove", "json_replace", "json_set", "json_type",
        "json_valid", "json_group_array", "json_group_object", "jsonb", "median",
    )
)  # fmt: skip

_ALLOWED_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE}


def authorizer(
    action: int, arg1: str | None, arg2: str | None, db: str | None, _: str | None
) -> int:
    if action in _ALLOWED_ACTIONS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in ALLOWED_FUNCTIONS:
        return sqlite3.SQLITE_OK
    # ATTACH (creates files), PRAGMA, writes, load_extension, readfile, writefile, …
    return sqlite3.SQLITE_DENY


def apply_limits(conn: sqlite3.Connection) -> None:
    conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 10_000_000)
    conn.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, 100_000)
    conn.setlimit(sqlite3.SQLITE_LIMIT_EXPR_DEPTH, 200)
    conn.setlimit(sqlite3.SQLITE_LIMIT_COMPOUND_SELECT, 100)
