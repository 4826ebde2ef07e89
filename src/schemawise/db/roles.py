"""The SELECT-only role model SQL runs as, and checks of a user's role (`doctor`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql as pgsql

from schemawise.errors import PermissionDeniedError

READER_ROLE = "schemawise_reader"
_SYSTEM = "('pg_catalog', 'information_schema', 'pg_toast')"


# Schemas no reader may see: schemawise's own bookkeeping (index, row-search queue, tenants).
_PRIVATE_SCHEMAS = ("schemawise",)
# Defaults that hold even if a session forgot its own guards.
_ROLE_DEFAULTS = (
    ("default_transaction_read_only", "on"),
    ("statement_timeout", "60s"),
    ("idle_in_transaction_session_timeout", "65s"),
    ("client_connection_check_interval", "1s"),
)
_prepared: set[tuple[str, tuple[str, ...]]] = set()
# Role set-up, by any process, one at a time (GRANT and ALTER ROLE race otherwise).
ROLES_LOCK = "SELECT pg_advisory_xact_lock(hashtext('schemawise.roles'))"
# Connections one login role may hold at once: one tenant (or the plain reader) cannot take
# every connection of the server from the others.
CONNECTION_LIMIT = 32


def ensure_reader_role(admin_url: str) -> str:
    """Create (idempotently) the readers' group with SELECT on every user schema, the login
    role model SQL runs as, and the revocations of db/hardening.py, in the database behind
    `admin_url`; return the URL to connect as the reader."""
    from schemawise.db.hardening import revoke_dangerous_functions
    from schemawise.db.tenancy import READERS_GROUP, ensure_tenancy_objects

    with psycopg.connect(admin_url, autocommit=True) as conn:
        found = conn.execute(
            f"SELECT nspname, oid::text FROM pg_namespace WHERE nspname NOT IN {_SYSTEM} "
            "AND nspname NOT LIKE 'pg\\_%' ORDER BY 1"
        ).fetchall()
        schemas = tuple(str(r[0]) for r in found)
        # Keyed by oid too: a schema dropped and created again has lost its default privileges.
        key = (admin_url, tuple(f"{name}:{oid}" for name, oid in found))
        if key in _prepared:
            return with_user(admin_url, READER_ROLE)
        # Concurrent runs would race on GRANT ("tuple concurrently updated"): one at a time.
        with conn.transaction():
            conn.execute(ROLES_LOCK)
            group = pgsql.Identifier(READERS_GROUP)
            if not _role_exists(conn, READERS_GROUP):
                conn.execute(pgsql.SQL("CREATE ROLE {} NOLOGIN").format(group))
            login_role(conn, READER_ROLE)
            database = conn.execute("SELECT current_database()").fetchone()
            assert database is not None
            conn.execute(
                pgsql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(
                    pgsql.Identifier(database[0]), group
                )
            )
            for schema in schemas:
                name = pgsql.Identifier(schema)
                if schema in _PRIVATE_SCHEMAS:
                    # Earlier releases granted these to the reader itself.
                    for grantee in (pgsql.Identifier(READER_ROLE), group):
                        conn.execute(
                            pgsql.SQL("REVOKE ALL ON ALL TABLES IN SCHEMA {} FROM {}").format(
                                name, grantee
                            )
                        )
                        conn.execute(
                            pgsql.SQL(
                                "ALTER DEFAULT PRIVILEGES IN SCHEMA {} REVOKE ALL ON TABLES FROM {}"
                            ).format(name, grantee)
                        )
                    conn.execute(
                        pgsql.SQL("REVOKE ALL ON SCHEMA {} FROM {}").format(
                            name, pgsql.Identifier(READER_ROLE)
                        )
                    )
                    continue
                conn.execute(pgsql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(name, group))
                conn.execute(
                    pgsql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA {} TO {}").format(name, group)
                )
                conn.execute(
                    pgsql.SQL(
                        "ALTER DEFAULT PRIVILEGES IN SCHEMA {} GRANT SELECT ON TABLES TO {}"
                    ).format(name, group)
                )
            ensure_tenancy_objects(conn)
            revoke_dangerous_functions(conn)
        _prepared.add(key)
    return with_user(admin_url, READER_ROLE)


def _role_exists(conn: psycopg.Connection[Any], name: str) -> bool:
    return conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone() is not None


def login_role(conn: psycopg.Connection[Any], name: str) -> None:
    """A non-superuser login role in the readers' group, which it may not SET ROLE to (so it
    cannot leave its own identity), with read-only defaults."""
    from schemawise.db.tenancy import READERS_GROUP

    role = pgsql.Identifier(name)
    if not _role_exists(conn, name):
        conn.execute(
            pgsql.SQL(
                "CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION "
                "NOBYPASSRLS NOINHERIT"
            ).format(role)
        )
    conn.execute(
        pgsql.SQL("ALTER ROLE {} CONNECTION LIMIT {}").format(role, pgsql.Literal(CONNECTION_LIMIT))
    )
    membership = (
        "GRANT {} TO {} WITH INHERIT TRUE, SET FALSE"
        if conn.info.server_version >= 160000
        else "GRANT {} TO {}"
    )
    conn.execute(pgsql.SQL(membership).format(pgsql.Identifier(READERS_GROUP), role))
    for setting, value in _ROLE_DEFAULTS:
        if setting == "client_connection_check_interval" and conn.info.server_version < 140000:
            continue
        conn.execute(
            pgsql.SQL("ALTER ROLE {} SET {} = {}").format(
                role, pgsql.Identifier(setting), pgsql.Literal(value)
            )
        )


def with_user(url: str, user: str) -> str:
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
    with _connect(url) as conn:
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
                    f"{name} is a superuser: model SQL could read server files or run programs. "
                    "Connect schemawise as a SELECT-only role instead.",
                    _reader_role_sql(conn),
                )
            )
        # A superuser has them all: the superuser finding says what to do instead.
        for flag, label in (
            []
            if superuser
            else (
                (createrole, "CREATEROLE"),
                (createdb, "CREATEDB"),
                (bypassrls, "BYPASSRLS"),
            )
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
        findings.extend(_database_findings(conn))
    if not findings:
        findings.append(Finding("ok", "role", "The role is a non-superuser without write access."))
    return findings


def _sql_name(name: str, conn: psycopg.Connection[Any]) -> str:
    """A name as a person would type it: quoted only when it must be."""
    plain = re.fullmatch(r"[a-z_][a-z0-9_]*", name) is not None
    return name if plain else pgsql.Identifier(name).as_string(conn)


def _reader_role_sql(conn: psycopg.Connection[Any]) -> str:
    """The statements that make a SELECT-only role for this database's user schemas."""
    schemas = [
        str(r[0])
        for r in conn.execute(
            f"SELECT nspname FROM pg_namespace WHERE nspname NOT IN {_SYSTEM} "
            "AND nspname NOT LIKE 'pg\\_%' AND nspname NOT IN ('schemawise', 'public') "
            "ORDER BY 1"
        ).fetchall()
    ] or ["public"]
    role = _sql_name(READER_ROLE, conn)
    lines = [
        f"CREATE ROLE {role} LOGIN PASSWORD '…' NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS;",
        f"ALTER ROLE {role} SET default_transaction_read_only = on;",
        f"ALTER ROLE {role} SET statement_timeout = '60s';",
    ]
    for schema in schemas:
        name = _sql_name(schema, conn)
        lines += [
            f"GRANT USAGE ON SCHEMA {name} TO {role};",
            f"GRANT SELECT ON ALL TABLES IN SCHEMA {name} TO {role};",
            f"ALTER DEFAULT PRIVILEGES IN SCHEMA {name} GRANT SELECT ON TABLES TO {role};",
        ]
    return " ".join(lines) + f" Then connect as {READER_ROLE}."


def _database_findings(conn: psycopg.Connection[Any]) -> list[Finding]:
    """What the database grants every role: functions PUBLIC may still execute, and
    row-level security keyed on a setting that SQL text can rewrite."""
    from schemawise.db.hardening import missing_revocations

    findings = [
        Finding(
            "warning",
            "revocation",
            f"PUBLIC may execute {r.function}: {r.reason}.",
            r.statement + " -- as the owner; GRANT it back to roles that need it",
        )
        for r in missing_revocations(conn)
    ]
    settable = conn.execute(
        "SELECT schemaname, tablename, policyname FROM pg_policies "
        "WHERE qual ILIKE '%current_setting%' ORDER BY 1, 2, 3"
    ).fetchall()
    for schema, table, policy in settable:
        findings.append(
            Finding(
                "danger",
                "row_security",
                f"Policy {policy} on {schema}.{table} reads a setting (current_setting): SQL "
                "text that reaches set_config rewrites it, so it is not a tenant boundary.",
                "Key the policy on the login role instead: `schemawise rows enable … "
                "--row-security` writes one on schemawise.current_tenant().",
            )
        )
    return findings


def _connect(url: str) -> psycopg.Connection[Any]:
    """A connection to the user's database, or a ConnectionFailedError with a hint."""
    from schemawise.db.postgres import connect_explained

    return connect_explained(
        url, "Could not connect to",
        "Check that the server is running, the host and port are right, and the user may log in.",
        autocommit=True, connect_timeout=10,
    )  # fmt: skip


def refuse_superuser(url: str) -> None:
    """Model SQL never runs as a superuser: read-only transactions do not stop COPY … TO
    PROGRAM or pg_read_file for a superuser."""
    with _connect(url) as conn:
        row = conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()
    if row and row[0]:
        raise PermissionDeniedError(
            "Refusing to run SQL as a superuser.",
            "Connect as a SELECT-only role (see `schemawise doctor URL`); for the embedded "
            "database use the URL `embedded`, which runs as schemawise_reader.",
        )
