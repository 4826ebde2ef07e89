"""SQLite's own guards: an authorizer that allows reads and known functions only, and limits."""

from __future__ import annotations

import sqlite3

from schemawise.validate.functions.lists import allowed_functions

# The same allow-list the static check reads (validate/functions/sqlite.txt), loaded once:
# the authorizer runs for every function a statement names, so it stays a frozenset lookup.
ALLOWED_FUNCTIONS = allowed_functions("sqlite")

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
