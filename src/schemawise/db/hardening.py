"""Defence in the database itself: `REVOKE EXECUTE … FROM PUBLIC` on the functions that write,
signal, lock, read settings or server state, or run SQL text, so that a query which gets past
the static allow-list (a checker bug, a new server version) still cannot use them.

Postgres grants EXECUTE on every function to PUBLIC by default; a role cannot be refused what
PUBLIC holds, so the revocation is from PUBLIC, in each database (pg_proc is per database).
The embedded database applies it on every start of the reader role; `doctor` reports each
missing revocation of a user's database with the statement that fixes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql as pgsql

# name → why PUBLIC must not execute it. Every overload of the name is revoked, except where
# `TEXT_ARGUMENT_ONLY` narrows it to the overloads that take SQL text.
REVOKED: dict[str, str] = {
    "set_config": "rewrites settings the guard relies on (statement_timeout, row-security keys)",
    "pg_terminate_backend": "ends other sessions of the same role",
    "pg_cancel_backend": "cancels other sessions' queries",
    "pg_logical_emit_message": "writes WAL from a read-only transaction; rollback keeps it",
    "ts_stat": "runs the SQL text given as its argument",
    "ts_rewrite": "the (tsquery, text) form runs the SQL text given as its argument",
    "query_to_xml": "runs SQL text",
    "query_to_xml_and_xmlschema": "runs SQL text",
    "query_to_xmlschema": "runs SQL text",
    "cursor_to_xml": "reads an open cursor by name",
    "cursor_to_xmlschema": "reads an open cursor by name",
    "table_to_xml": "reads a table by name, hidden from static checks",
    "table_to_xml_and_xmlschema": "reads a table by name, hidden from static checks",
    "table_to_xmlschema": "reads a table by name",
    "schema_to_xml": "reads every table of a schema by name",
    "schema_to_xml_and_xmlschema": "reads every table of a schema by name",
    "schema_to_xmlschema": "reads a schema by name",
    "database_to_xml": "reads every table of the database",
    "database_to_xml_and_xmlschema": "reads every table of the database",
    "database_to_xmlschema": "reads the database's structure",
    "pg_advisory_lock": "session-level lock that survives rollback",
    "pg_advisory_lock_shared": "session-level lock that survives rollback",
    "pg_try_advisory_lock": "session-level lock that survives rollback",
    "pg_try_advisory_lock_shared": "session-level lock that survives rollback",
    "pg_advisory_xact_lock": "blocks other sessions",
    "pg_advisory_xact_lock_shared": "blocks other sessions",
    "pg_try_advisory_xact_lock": "blocks other sessions",
    "pg_try_advisory_xact_lock_shared": "blocks other sessions",
    "pg_show_all_settings": "reads every setting",
    "pg_lock_status": "shows other sessions' locks",
    "pg_stat_get_activity": "shows other sessions' queries",
    "pg_stat_get_live_tuples": "row counts of every tenant together",
    "pg_stat_get_dead_tuples": "row counts of every tenant together",
    "pg_stat_get_tuples_inserted": "row counts of every tenant together",
    "pg_stat_get_tuples_updated": "row counts of every tenant together",
    "pg_stat_get_tuples_deleted": "row counts of every tenant together",
    "pg_current_xact_id": "assigns a transaction id (a write)",
    "txid_current": "assigns a transaction id (a write)",
    "lo_creat": "creates a large object",
    "lo_create": "creates a large object",
    "lo_from_bytea": "creates a large object",
    "lo_put": "writes a large object",
    "lo_unlink": "deletes a large object",
    "lo_open": "opens a large object by id",
    "lo_get": "reads a large object by id",
}
TEXT_ARGUMENT_ONLY = frozenset({"ts_rewrite"})

# Every overload of the listed names whose EXECUTE PUBLIC still holds.
_MISSING = """
SELECT p.oid::regprocedure::text, p.proname
FROM pg_proc p
WHERE p.proname = ANY(%(names)s)
  AND (NOT p.proname = ANY(%(text_only)s) OR 'text'::regtype = ANY(p.proargtypes::regtype[]))
  AND EXISTS (
    SELECT 1 FROM aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
    WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE')
ORDER BY 1
"""


@dataclass(frozen=True)
class Revocation:
    function: str  # regprocedure text, e.g. set_config(text,text,boolean)
    reason: str

    @property
    def statement(self) -> str:
        return f"REVOKE EXECUTE ON FUNCTION {self.function} FROM PUBLIC;"


def missing_revocations(conn: psycopg.Connection[Any]) -> list[Revocation]:
    rows = conn.execute(
        _MISSING, {"names": list(REVOKED), "text_only": list(TEXT_ARGUMENT_ONLY)}
    ).fetchall()
    return [Revocation(str(signature), REVOKED[str(name)]) for signature, name in rows]


def revoke_dangerous_functions(conn: psycopg.Connection[Any]) -> list[Revocation]:
    """Apply every missing revocation (as the functions' owner or a superuser); idempotent."""
    missing = missing_revocations(conn)
    for revocation in missing:
        conn.execute(
            pgsql.SQL("REVOKE EXECUTE ON FUNCTION {} FROM PUBLIC").format(
                pgsql.SQL(revocation.function)  # regprocedure text from the catalog itself
            )
        )
    return missing
