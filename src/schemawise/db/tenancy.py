"""Tenancy no query can change: a run for tenant T logs in as T's own role.

A tenant kept in a setting (`SET schemawise.tenant`) is not a boundary: SQL text that manages
to call `set_config` rewrites it (SECURITY.md). A login role is: `session_user` cannot be
changed from inside SQL text by a non-superuser, and each tenant role may not `SET ROLE` to
any other (it is granted the readers' group WITH SET FALSE, and no tenant role is granted to
another). Row-level security reads the tenant from `schemawise.current_tenant()`, a SECURITY
DEFINER function that maps `session_user` to its tenant through a table no reader may read.

    schemawise_readers (NOLOGIN; SELECT on the user schemas)
      ├─ schemawise_reader        (LOGIN; current_tenant() is NULL: sees no tenant's rows)
      └─ schemawise_t_<digest>    (LOGIN, one per tenant; current_tenant() is its tenant)
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import psycopg
from psycopg import sql as pgsql

from schemawise.errors import PermissionDeniedError

READERS_GROUP = "schemawise_readers"
TENANT_ROLE_PREFIX = "schemawise_t_"

_SETUP = """
CREATE SCHEMA IF NOT EXISTS schemawise;
CREATE TABLE IF NOT EXISTS schemawise.tenant_roles (
    role_name name PRIMARY KEY,
    tenant text NOT NULL
);
REVOKE ALL ON schemawise.tenant_roles FROM PUBLIC;
CREATE OR REPLACE FUNCTION schemawise.current_tenant() RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog
    AS $$ SELECT tenant FROM schemawise.tenant_roles WHERE role_name = session_user $$;
REVOKE ALL ON FUNCTION schemawise.current_tenant() FROM PUBLIC;
CREATE TABLE IF NOT EXISTS schemawise.tenancy_secret (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    salt text NOT NULL
);
REVOKE ALL ON schemawise.tenancy_secret FROM PUBLIC;
INSERT INTO schemawise.tenancy_secret (salt)
    SELECT replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '')
    WHERE NOT EXISTS (SELECT 1 FROM schemawise.tenancy_secret);
"""


def tenant_role_name(tenant: Any, salt: str) -> str:
    """A role name for any tenant value (role names are at most 63 bytes). Role names are
    visible to every role (`regrole`), so the name is keyed with the database's secret salt:
    a plain hash of "2" or "acme-corp" would tell any tenant which others exist."""
    digest = hmac.new(salt.encode(), str(tenant).encode("utf-8"), hashlib.sha256).hexdigest()
    return TENANT_ROLE_PREFIX + digest[:24]


def _salt(conn: psycopg.Connection[Any]) -> str:
    row = conn.execute("SELECT salt FROM schemawise.tenancy_secret").fetchone()
    assert row is not None, "ensure_tenancy_objects writes the salt"
    return str(row[0])


def ensure_tenancy_objects(conn: psycopg.Connection[Any]) -> None:
    """The mapping table and `schemawise.current_tenant()`; callable by the readers only."""
    conn.execute(_SETUP)
    conn.execute(
        pgsql.SQL("GRANT USAGE ON SCHEMA schemawise TO {}").format(pgsql.Identifier(READERS_GROUP))
    )
    conn.execute(
        pgsql.SQL("GRANT EXECUTE ON FUNCTION schemawise.current_tenant() TO {}").format(
            pgsql.Identifier(READERS_GROUP)
        )
    )


_ready: dict[tuple[str, str], str] = {}


def ensure_tenant_role(admin_url: str, tenant: Any) -> str:
    """Create (idempotently) tenant T's login role; return the URL to run T's queries as.
    Concurrent runs of one tenant would race on GRANT and ALTER ROLE ("tuple concurrently
    updated"): the set-up runs once per process and tenant, under the roles' advisory lock."""
    from schemawise.db.roles import ROLES_LOCK, ensure_reader_role, login_role, with_user

    ensure_reader_role(admin_url)  # every time: a schema created since needs its grants
    key = (admin_url, str(tenant))
    if key in _ready:
        return _ready[key]
    with psycopg.connect(admin_url, autocommit=True) as conn, conn.transaction():
        conn.execute(ROLES_LOCK)
        name = tenant_role_name(tenant, _salt(conn))
        login_role(conn, name)
        conn.execute(
            "INSERT INTO schemawise.tenant_roles (role_name, tenant) VALUES (%s, %s) "
            "ON CONFLICT (role_name) DO UPDATE SET tenant = EXCLUDED.tenant",
            (name, str(tenant)),
        )
    _ready[key] = with_user(admin_url, name)
    return _ready[key]


def verify_session_tenant(url: str, tenant: Any) -> None:
    """On a user's own database schemawise cannot create roles: the URL must already log in
    as a role whose `schemawise.current_tenant()` is the tenant asked for."""
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
            row = conn.execute("SELECT schemawise.current_tenant()").fetchone()
    except psycopg.Error as exc:
        raise PermissionDeniedError(
            f"Cannot confirm that this connection is scoped to tenant {tenant!r}: "
            f"{str(exc).strip().splitlines()[0]}",
            "Connect as the tenant's own role: run `schemawise rows enable … --row-security` and "
            "create the role with schemawise.db.tenancy.ensure_tenant_role as the owner.",
        ) from exc
    if row is None or row[0] != str(tenant):
        raise PermissionDeniedError(
            f"This connection belongs to tenant {row[0] if row else None!r}, not {tenant!r}.",
            "Connect as the tenant's own role (schemawise.db.tenancy.ensure_tenant_role).",
        )
