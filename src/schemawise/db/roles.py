"""The SELECT-only role model SQL runs as, and checks of a user's role (`doctor`)."""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
from psycopg import sql as pgsql

from schemawise.errors import PermissionDeniedError

READER_ROLE = "schemawise_reader"
_SYSTEM = "('pg_catalog', 'information_schema', 'pg_toast')"


def ensure_reader_role(admin_url: str) -> str:
    """Create (idempotently) a non-superuser role with SELECT on every user schema of the
    database behind `admin_url`; return the URL to connect as it."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (READER_ROLE,))
        role = pgsql.Identifier(READER_ROLE)
        if exists.fetchone() is None:
            conn.execute(
                pgsql.SQL(
                    "CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION "
                    "NOBYPASSRLS NOINHERIT"
                ).format(role)
            )
        # Defaults that hold even if a session forgot its own guards.
        conn.execute(pgsql.SQL("ALTER ROLE {} SET default_transaction_read_only = on").format(role))
        conn.execute(pgsql.SQL("ALTER ROLE {} SET statement_timeout = '60s'").format(role))
        database = conn.execute("SELECT current_database()").fetchone()
        assert database is not None
        conn.execute(
            pgsql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(
                pgsql.Identifier(database[0]), role
            )
        )
        schemas = conn.execute(
            f"SELECT nspname FROM pg_namespace WHERE nspname NOT IN {_SYSTEM} "
            "AND nspname NOT LIKE 'pg\\_%'"
        ).fetchall()
        for (schema,) in schemas:
            name = pgsql.Identifier(schema)
            conn.execute(pgsql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(name, role))
            conn.execute(
                pgsql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA {} TO {}").format(name, role)
            )
            conn.execute(
                pgsql.SQL(
                    "ALTER DEFAULT PRIVILEGES IN SCHEMA {} GRANT SELECT ON TABLES TO {}"
                ).format(name, role)
            )
    return _with_user(admin_url, READER_ROLE)


def _with_user(url: str, user: str) -> str:
    scheme, rest = url.split("://", 1)
    host_part = rest.rsplit("@", 1)[1] if "@" in rest else rest
    return f"{scheme}://{user}@{host_part}"


@dataclass(frozen=True)
class Finding:
    severity: str  # "danger", "warning", "ok"
    check: str
    message: str
    fix: str = ""


_DANGEROUS_MEMBERSHIPS = (
    "pg_read_server_files",
    "pg_write_server_files",
    "pg_execute_server_program",
    "pg_signal_backend",
    "pg_write_all_data",
    "pg_monitor",
)


def inspect_role(url: str) -> list[Finding]:
    """What a careful DBA would check about the role schemawise connects as."""
    findings: list[Finding] = []
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT rolname, rolsuper, rolcreaterole, rolcreatedb, rolbypassrls "
            "FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
        assert row is not None
        name, superuser, createrole, createdb, bypassrls = row
        if superuser:
            findings.append(
                Finding(
                    "danger",
                    "superuser",
                    f"{name} is a superuser: model SQL could read server files or run programs.",
                    f"CREATE ROLE {READER_ROLE} LOGIN; GRANT USAGE ON SCHEMA … TO {READER_ROLE}; "
                    f"GRANT SELECT ON ALL TABLES IN SCHEMA … TO {READER_ROLE}; and connect as it.",
                )
            )
        for flag, label in (
            (createrole, "CREATEROLE"),
            (createdb, "CREATEDB"),
            (bypassrls, "BYPASSRLS"),
        ):
            if flag:
                findings.append(
                    Finding(
                        "warning",
                        label.lower(),
                        f"{name} has {label}.",
                        f"ALTER ROLE {name} NO{label};",
                    )
                )
        members = conn.execute(
            "SELECT r.rolname FROM pg_roles r WHERE pg_has_role(current_user, r.oid, 'MEMBER') "
            "AND r.rolname = ANY(%s)",
            (list(_DANGEROUS_MEMBERSHIPS),),
        ).fetchall()
        # A superuser is a member of every role: the superuser finding already says it all.
        for (role,) in [] if superuser else members:
            findings.append(
                Finding(
                    "danger",
                    "membership",
                    f"{name} is a member of {role}.",
                    f"REVOKE {role} FROM {name};",
                )
            )
        writable = conn.execute(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            f"WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN {_SYSTEM} AND "
            "(has_table_privilege(c.oid, 'INSERT') OR has_table_privilege(c.oid, 'UPDATE') "
            "OR has_table_privilege(c.oid, 'DELETE') OR has_table_privilege(c.oid, 'TRUNCATE'))"
        ).fetchone()
        if writable and writable[0] and not superuser:
            findings.append(
                Finding(
                    "warning",
                    "write_privileges",
                    f"{name} may write to {writable[0]} tables.",
                    f"Connect as a SELECT-only role such as {READER_ROLE}.",
                )
            )
        timeout = conn.execute("SHOW statement_timeout").fetchone()
        if timeout and timeout[0] in ("0", "0ms"):
            findings.append(
                Finding(
                    "warning",
                    "statement_timeout",
                    f"{name} has no default statement_timeout (schemawise sets one per query).",
                    f"ALTER ROLE {name} SET statement_timeout = '60s';",
                )
            )
    if not findings:
        findings.append(Finding("ok", "role", "The role is a non-superuser without write access."))
    return findings


def refuse_superuser(url: str) -> None:
    """Model SQL never runs as a superuser: read-only transactions do not stop COPY … TO
    PROGRAM or pg_read_file for a superuser."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()
    if row and row[0]:
        raise PermissionDeniedError(
            "Refusing to run SQL as a superuser.",
            "Connect as a SELECT-only role (see `schemawise doctor URL`); for the embedded "
            "database use the URL `embedded`, which runs as schemawise_reader.",
        )
