"""The walk (SECURITY.md L3): every function the real catalogues hold and the allow-list does
not is refused by the static check, in every form a query can call it, so a new server
version cannot add an open door silently. And the converse: every listed name exists."""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass

import duckdb
import psycopg
import pytest

from schemawise.validate.functions import SYNTAX_MARK, function_list
from schemawise.validate.safety import check_safety

# An unquoted name reaches the function only when it is a plain identifier; other catalogue
# names (DuckDB's `+`, `~~`, "IS DISTINCT FROM") are callable by call syntax only quoted.
_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")

# Every way a query can name a function: the select list, FROM (a table function), a
# schema-qualified call, a quoted name, and a call nested in the WHERE of a subquery.
_FORMS = {
    "call": "SELECT {name}({args})",
    "from": "SELECT * FROM {name}({args})",
    "qualified": "SELECT {schema}.{name}({args})",
    "quoted": "SELECT {quoted}({args})",
    "nested": "SELECT 1 FROM (SELECT 1 AS x) s WHERE x IN (SELECT 1 WHERE {name}({args}) IS NULL)",
}
_QUOTED_FORMS = ("quoted",)


@dataclass(frozen=True)
class Walk:
    names: int
    checked: int
    passed: list[str]  # statements the static check let through: open doors
    seconds: float

    def summary(self, engine: str) -> str:
        return (
            f"{engine}: {self.names} names off the list, {self.checked} statements checked, "
            f"{len(self.passed)} passed, {self.seconds:.1f} s"
        )


def _statements(name: str, arities: Iterable[int], schema: str) -> Iterable[str]:
    quoted = '"' + name.replace('"', '""') + '"'
    for arity in sorted(set(arities)):
        args = ", ".join(["NULL"] * arity)
        for form, template in _FORMS.items():
            if form not in _QUOTED_FORMS and not _PLAIN.match(name):
                continue
            yield template.format(name=name, quoted=quoted, args=args, schema=schema)


def _walk(catalogue: dict[str, set[int]], dialect: str, schema: str) -> Walk:
    allowed = function_list(dialect).names
    started = time.perf_counter()
    checked = 0
    passed: list[str] = []
    off_list = sorted(n for n in catalogue if n not in allowed)
    for name in off_list:
        for sql in _statements(name, catalogue[name], schema):
            checked += 1
            if check_safety(sql, dialect).ok:
                passed.append(sql)
    return Walk(len(off_list), checked, passed, time.perf_counter() - started)


def _wrongly_refused(catalogue: dict[str, set[int]], dialect: str) -> list[str]:
    """Listed names that no arity's plain call gets through as far as the function check:
    a name the checker resolves wrongly would be refused however it is called."""
    wrong = []
    for name in sorted(function_list(dialect).names & set(catalogue)):
        if not _PLAIN.match(name):
            continue
        refusals = [
            [
                p.type
                for p in check_safety(f"SELECT {name}({', '.join(['NULL'] * n)})", dialect).problems
            ]
            for n in sorted(catalogue[name])
        ]
        if all("forbidden_function" in types for types in refusals):
            wrong.append(name)
    return wrong


# --- Postgres: pg_proc, every schema, pgvector included ----------------------------------


@pytest.fixture(scope="module")
def pg_catalogue(embedded_url: str) -> dict[str, set[int]]:
    with psycopg.connect(embedded_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        rows = conn.execute("SELECT DISTINCT proname, pronargs FROM pg_proc").fetchall()
    catalogue: dict[str, set[int]] = {}
    for name, arity in rows:
        catalogue.setdefault(name, set()).add(arity)
    assert "l2_distance" in catalogue and "ts_stat" in catalogue
    return catalogue


def test_every_postgres_function_off_the_list_is_refused(pg_catalogue: dict[str, set[int]]) -> None:
    walk = _walk(pg_catalogue, "postgres", "pg_catalog")
    print("\n" + walk.summary("postgres"))
    assert walk.names > 2000 and walk.checked > 5 * walk.names
    assert walk.passed == []


def test_every_listed_postgres_name_exists(pg_catalogue: dict[str, set[int]]) -> None:
    # A typo in the list is a bug: every name is a pg_proc function or declared grammar.
    reasons = function_list("postgres").reasons
    missing = [
        n for n, why in reasons.items() if n not in pg_catalogue and not why.startswith(SYNTAX_MARK)
    ]
    assert missing == []


def test_listed_postgres_functions_are_not_refused(pg_catalogue: dict[str, set[int]]) -> None:
    assert _wrongly_refused(pg_catalogue, "postgres") == []


def test_operators_backed_by_unlisted_functions_are_immutable_or_refused(embedded_url: str) -> None:
    """Operators call functions too (pg_operator.oprcode). One whose function is neither on the
    list nor immutable (computing from its operands only) must be refused statically, written
    as a symbol or as OPERATOR(pg_catalog.op); and OPERATOR(…) naming any other schema, or none
    (the search path may hold a user schema's operator), is refused whatever it runs."""
    allowed = function_list("postgres").names
    with psycopg.connect(embedded_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        rows = conn.execute(
            "SELECT o.oprname, o.oprleft <> 0, format_type(o.oprleft, NULL), "
            "format_type(o.oprright, NULL), n.nspname, p.proname, p.provolatile "
            "FROM pg_operator o JOIN pg_proc p ON p.oid = o.oprcode "
            "JOIN pg_namespace n ON n.oid = o.oprnamespace"
        ).fetchall()
    assert len(rows) > 800
    open_doors = []
    for op, infix, left, right, schema, proname, volatility in rows:
        operand = f"NULL::{left} " if infix else ""
        forms = [f"OPERATOR({op})", f"OPERATOR(public.{op})"]
        if schema != "pg_catalog":
            forms.append(f"OPERATOR({schema}.{op})")
        refused_forms = [f"SELECT {operand}{form} NULL::{right}" for form in forms]
        if proname not in allowed and volatility != "i":
            refused_forms += [
                f"SELECT {operand}{op} NULL::{right}",
                f"SELECT {operand}OPERATOR(pg_catalog.{op}) NULL::{right}",
            ]
        open_doors += [
            (sql, proname, volatility) for sql in refused_forms if check_safety(sql, "postgres").ok
        ]
    assert open_doors == []


# --- DuckDB: duckdb_functions() ------------------------------------------------------------


@pytest.fixture(scope="module")
def duckdb_catalogue() -> dict[str, set[int]]:
    conn = duckdb.connect(
        config={
            "enable_external_access": False,
            "autoload_known_extensions": False,
            "autoinstall_known_extensions": False,
        }
    )
    rows = conn.execute(
        "SELECT DISTINCT function_name, len(parameters) FROM duckdb_functions()"
    ).fetchall()
    conn.close()
    catalogue: dict[str, set[int]] = {}
    for name, arity in rows:
        catalogue.setdefault(name, set()).add(int(arity or 0))
    assert "query_table" in catalogue and "duckdb_settings" in catalogue
    return catalogue


def test_every_duckdb_function_off_the_list_is_refused(
    duckdb_catalogue: dict[str, set[int]],
) -> None:
    walk = _walk(duckdb_catalogue, "duckdb", "main")
    print("\n" + walk.summary("duckdb"))
    assert walk.names > 500
    assert walk.passed == []


def test_listed_duckdb_functions_are_not_refused(duckdb_catalogue: dict[str, set[int]]) -> None:
    assert _wrongly_refused(duckdb_catalogue, "duckdb") == []


# --- SQLite: pragma_function_list of Python's sqlite3 --------------------------------------


@pytest.fixture(scope="module")
def sqlite_catalogue() -> dict[str, set[int]]:
    conn = sqlite3.connect(":memory:")
    rows = conn.execute("SELECT name, narg FROM pragma_function_list").fetchall()
    conn.close()
    catalogue: dict[str, set[int]] = {}
    for name, narg in rows:
        # narg -1 is "any number": one argument stands for it.
        catalogue.setdefault(name, set()).add(1 if narg < 0 else narg)
    assert "load_extension" in catalogue
    return catalogue


def test_every_sqlite_function_off_the_list_is_refused(
    sqlite_catalogue: dict[str, set[int]],
) -> None:
    walk = _walk(sqlite_catalogue, "sqlite", "main")
    print("\n" + walk.summary("sqlite"))
    assert walk.names > 20
    assert walk.passed == []


def test_listed_sqlite_functions_are_not_refused(sqlite_catalogue: dict[str, set[int]]) -> None:
    assert _wrongly_refused(sqlite_catalogue, "sqlite") == []
