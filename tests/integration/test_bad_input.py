"""Bad input gets a clear error with a hint; partial results are labelled as partial."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from schemawise.db import connect
from schemawise.db.base import Catalog
from schemawise.db.postgres import PostgresSource
from schemawise.errors import (
    ConnectionFailedError,
    InvalidURLError,
    NotADatabaseError,
    SchemawiseError,
)
from schemawise.graph.extract import extract_graph

MISHAP_SQL = """
DROP SCHEMA IF EXISTS mishap CASCADE;
CREATE SCHEMA mishap;
CREATE TABLE mishap.accounts (account_id integer PRIMARY KEY, name text);
CREATE TABLE mishap.invoices (invoice_id integer PRIMARY KEY,
    account_id integer REFERENCES mishap.accounts);
CREATE TABLE mishap.secrets (secret_id integer PRIMARY KEY,
    account_id integer REFERENCES mishap.accounts);
CREATE TABLE mishap.doomed (doomed_id integer PRIMARY KEY,
    account_id integer REFERENCES mishap.accounts);
INSERT INTO mishap.accounts SELECT g, 'a' || g FROM generate_series(1, 5) g;
INSERT INTO mishap.invoices SELECT g, 1 + g % 5 FROM generate_series(1, 20) g;
INSERT INTO mishap.secrets SELECT g, 1 + g % 5 FROM generate_series(1, 5) g;
INSERT INTO mishap.doomed SELECT g, 1 + g % 5 FROM generate_series(1, 5) g;
"""


@pytest.fixture()
def mishap_url(embedded_url: str) -> str:
    with psycopg.connect(embedded_url, autocommit=True) as conn:
        conn.execute(MISHAP_SQL)  # type: ignore[arg-type]
    return embedded_url


@pytest.mark.parametrize(
    ("url", "error"),
    [
        ("mysql://h/db", InvalidURLError),
        ("", InvalidURLError),
        ("postgresql://nobody@127.0.0.1:1/none?connect_timeout=3", ConnectionFailedError),
        ("sqlite:////no/such/file.sqlite", ConnectionFailedError),
        ("duckdb:////no/such/file.duckdb", ConnectionFailedError),
    ],
)
def test_unusable_urls(url: str, error: type[SchemawiseError]) -> None:
    with pytest.raises(error) as info:
        connect(url)
    assert info.value.message and info.value.hint


@pytest.mark.parametrize("scheme", ["sqlite", "duckdb"])
def test_file_that_is_not_a_database(tmp_path: Path, scheme: str) -> None:
    path = tmp_path / f"notes.{scheme}"
    path.write_text("these are meeting notes, not a database\n" * 50)
    with pytest.raises(NotADatabaseError) as info:
        connect(f"{scheme}:///{path}")
    assert str(path) in info.value.message
    assert info.value.hint


def test_password_never_shown_in_errors() -> None:
    with pytest.raises(ConnectionFailedError) as info:
        connect("postgresql://me:hunter2@127.0.0.1:1/db?connect_timeout=3")
    assert "hunter2" not in info.value.message


class VanishingTableSource(PostgresSource):
    """A real Postgres source whose table is dropped by someone else right after the catalog
    is read: the situation of a warehouse changing under a long extraction."""

    def read_catalog(self) -> Catalog:
        catalog = super().read_catalog()
        with psycopg.connect(self.url, autocommit=True) as other:
            other.execute("DROP TABLE mishap.doomed")
        return catalog


def test_table_that_disappears_mid_run(mishap_url: str) -> None:
    with VanishingTableSource(mishap_url, schemas=["mishap"]) as source:
        graph = extract_graph(source)
    assert graph.partial
    [problem] = [p for p in graph.problems if p.table == "mishap.doomed"]
    assert problem.stage == "data_check" and problem.message.startswith("missing")
    assert problem.hint
    # The rest of the graph stands, measured.
    invoices = next(e for e in graph.edges if e.child_table == "mishap.invoices")
    assert invoices.evidence.cardinality_basis == "declared+measured"


def test_permission_denied_on_one_table(mishap_url: str) -> None:
    with psycopg.connect(mishap_url, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS limited_reader")
        conn.execute("CREATE ROLE limited_reader LOGIN")
        conn.execute("GRANT USAGE ON SCHEMA mishap TO limited_reader")
        conn.execute(
            "GRANT SELECT ON mishap.accounts, mishap.invoices, mishap.doomed TO limited_reader"
        )
    url = mishap_url.replace("postgres@", "limited_reader@")
    try:
        with connect(url, schemas=["mishap"]) as source:
            graph = extract_graph(source)
    finally:
        with psycopg.connect(mishap_url, autocommit=True) as conn:
            conn.execute("DROP OWNED BY limited_reader")
            conn.execute("DROP ROLE limited_reader")
    assert graph.partial
    secret_problems = [p for p in graph.problems if p.table == "mishap.secrets"]
    assert secret_problems and "permission denied" in secret_problems[0].message
    assert "GRANT SELECT" in secret_problems[0].hint
    # Its structure is still known and its declared edge kept, with declared cardinality.
    edge = next(e for e in graph.edges if e.child_table == "mishap.secrets")
    assert edge.cardinality == "many_to_one"
    assert graph.table("mishap.secrets") is not None


def test_query_log_lines_that_are_no_entry_are_skipped_and_named(tmp_path: Path) -> None:
    # One stray line (a log cut short while written) no longer loses the whole log.
    from schemawise.graph.extract import unread_log_problems
    from schemawise.graph.infer import join_pairs, read_query_log

    log = tmp_path / "log.jsonl"
    log.write_text('{"sql": "select 1"}\nnot json\n{"user": "x"}\n{"sql": "SELEC oops FROM"}\n')
    entries = read_query_log(log)
    assert [e.sql for e in entries] == ["select 1", "SELEC oops FROM"]
    assert entries.skipped == [f"{log}:2: not JSON (Expecting value)", f"{log}:3: no `sql` field"]
    [problem] = unread_log_problems(entries, join_pairs(entries, "postgres"))
    assert problem.stage == "query_log"
    assert f"2 lines not an entry (first: {log}:2" in problem.message
    assert "1 query whose SQL did not parse" in problem.message


def test_a_file_with_no_log_entry_at_all_is_refused_naming_the_line(tmp_path: Path) -> None:
    from schemawise.graph.infer import read_query_log

    log = tmp_path / "log.jsonl"
    log.write_text("not json\nnor this\n")
    with pytest.raises(SchemawiseError) as info:
        read_query_log(log)
    assert f"{log}:1" in info.value.message


@pytest.mark.parametrize(
    "args",
    [
        ["doctor", "postgresql://%zz@/db", "--json"],
        ["run", "postgresql://[::1", "--sql", "SELECT 1", "--json"],
        ["check", "postgresql://%zz@/db", "--sql", "SELECT 1", "--json"],
    ],
)
def test_a_malformed_postgres_url_is_an_error_with_a_hint(args: list[str]) -> None:
    """psycopg refuses such a URL before connecting (fourth outside attack: a traceback)."""
    import json

    from typer.testing import CliRunner

    from schemawise.cli import app

    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    error = json.loads(result.stdout)["error"]
    assert error["message"] and error["hint"]


def test_a_sql_file_that_is_not_utf8_is_an_error_with_a_hint(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from schemawise.cli import app

    bad = tmp_path / "bad.sql"
    bad.write_bytes(b"select 1;\xff\xfe")
    result = CliRunner().invoke(app, ["check", "sqlite:///x.sqlite", "--file", str(bad)])
    assert result.exit_code == 2 and "not UTF-8" in result.output, result.output


@pytest.mark.parametrize(
    "args",
    [
        ["context", "payments", "--json"],
        ["sources", "--json"],
        ["sync", "--json"],
    ],
)
@pytest.mark.parametrize(
    "index_url", ["postgresql://nobody:hunter2@127.0.0.1:1/none?connect_timeout=3", "notaurl"]
)
def test_an_index_that_cannot_be_opened_is_an_error_with_a_hint(
    args: list[str], index_url: str
) -> None:
    from typer.testing import CliRunner

    from schemawise.cli import app

    result = CliRunner().invoke(app, [*args, "--index-url", index_url])
    assert result.exit_code == 2, result.output
    error = json.loads(result.stdout)["error"]
    assert error["type"] == "ConnectionFailedError" and "--index-url" in error["hint"]
    assert "hunter2" not in result.stdout


@pytest.mark.parametrize("budget", ["0", "-5"])
def test_a_budget_of_no_tokens_is_refused(budget: str) -> None:
    from typer.testing import CliRunner

    from schemawise.cli import app

    result = CliRunner().invoke(app, ["context", "payments", "--budget", budget])
    assert result.exit_code == 2 and "--budget" in result.output


def test_a_key_into_a_schema_not_read_is_said(embedded_url: str) -> None:
    with psycopg.connect(embedded_url, autocommit=True) as conn:
        conn.execute(
            "DROP SCHEMA IF EXISTS crossa CASCADE; DROP SCHEMA IF EXISTS crossb CASCADE;"
            "CREATE SCHEMA crossa; CREATE SCHEMA crossb;"
            "CREATE TABLE crossb.customers (cust_id int PRIMARY KEY);"
            "CREATE TABLE crossa.orders (ord_id int PRIMARY KEY,"
            " cust_id int REFERENCES crossb.customers)"
        )
    try:
        with PostgresSource(embedded_url, schemas=["crossa"]) as source:
            catalog = source.read_catalog()
        assert catalog.foreign_keys == []
        [problem] = [p for p in catalog.problems if "outside the schemas read" in p.message]
        assert problem.table == "crossa.orders" and "--schema" in problem.hint
        with PostgresSource(embedded_url, schemas=["crossa", "crossb"]) as source:
            assert len(source.read_catalog().foreign_keys) == 1
    finally:
        with psycopg.connect(embedded_url, autocommit=True) as conn:
            conn.execute("DROP SCHEMA crossa CASCADE; DROP SCHEMA crossb CASCADE")
