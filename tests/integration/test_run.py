"""`run` end to end: the opening example, the EXPLAIN gate, caps, and classified errors."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from schemawise.cli import app
from schemawise.db.guard import Limits
from schemawise.demo import warehouse
from schemawise.graph.model import SchemaGraph
from schemawise.runner import load_graph, run_checked
from schemawise.validate.check import check_sql

runner = CliRunner()


def test_opening_example_caught_and_fixed(
    demo_rows: warehouse.DemoRows, demo_graph: SchemaGraph
) -> None:
    truth = warehouse.true_units_of_shipped_orders(demo_rows)["S"]
    naive = check_sql(warehouse.FANOUT_SQL, demo_graph, fanout="error")
    [problem] = naive.errors
    assert problem.type == "fanout_risk"
    assert problem.model_dump()["edge"] == "shop.orders → shop.shipments"
    # Run as a warning to see the wrong number; the pre-aggregated rewrite passes and is right.
    # By default run refuses a SUM that a join multiplies: the number would be wrong.
    refused = run_checked("embedded", warehouse.FANOUT_SQL, graph=demo_graph)
    assert refused.result is None and [p.type for p in refused.check.errors] == ["fanout_risk"]
    assert refused.check.errors[0].hint.startswith("Aggregate shop.shipments by")
    wrong = run_checked("embedded", warehouse.FANOUT_SQL, graph=demo_graph, fanout="warn")
    fixed = run_checked("embedded", warehouse.FIXED_SQL, graph=demo_graph, fanout="error")
    assert fixed.ok and fixed.check.warnings == []
    assert wrong.result is not None and fixed.result is not None
    assert int(fixed.result.rows[0][1]) == truth
    assert int(wrong.result.rows[0][1]) > 2 * truth


# The opening example's join, made inside a CTE and summed outside it.
HIDDEN_FANOUT_SQL = """
WITH lines AS (
    SELECT o.status, oi.quantity
    FROM shop.orders o
    JOIN shop.order_items oi ON oi.order_id = o.order_id
    JOIN shop.shipments s ON s.order_id = o.order_id
)
SELECT status, SUM(quantity) AS units FROM lines GROUP BY status ORDER BY status
"""


def test_a_fanout_inside_a_cte_is_refused_before_it_gives_a_wrong_number(
    demo_rows: warehouse.DemoRows, demo_graph: SchemaGraph
) -> None:
    truth = warehouse.true_units_of_shipped_orders(demo_rows)["S"]
    refused = run_checked("embedded", HIDDEN_FANOUT_SQL, graph=demo_graph)
    assert refused.result is None and [p.type for p in refused.check.errors] == ["fanout_risk"]
    assert "inside lines" in refused.check.errors[0].message
    wrong = run_checked("embedded", HIDDEN_FANOUT_SQL, graph=demo_graph, fanout="warn")
    assert wrong.result is not None
    assert int(dict(wrong.result.rows)["S"]) > 2 * truth


def test_row_cap_reports_truncation(demo_rows: warehouse.DemoRows, demo_graph: SchemaGraph) -> None:
    outcome = run_checked(
        "embedded", "SELECT order_id FROM shop.orders", graph=demo_graph, limits=Limits(max_rows=5)
    )
    assert outcome.result is not None
    assert len(outcome.result.rows) == 5 and outcome.result.truncated
    assert outcome.result.truncated_reason == "more than 5 rows"


def test_explain_gate_refuses_without_numbers(
    demo_rows: warehouse.DemoRows, demo_graph: SchemaGraph
) -> None:
    sql = "SELECT count(*) FROM shop.order_items a CROSS JOIN shop.shipments b"
    outcome = run_checked("embedded", sql, graph=demo_graph)
    refusal = next(p for p in outcome.check.errors if p.type == "explain_rejected")
    assert refusal.model_dump()["node"] == "Nested Loop"
    text = json.dumps(outcome.to_dict(), default=str)
    assert "Plan Rows" not in text and "Total Cost" not in text
    assert outcome.check.explain == {"checked": True, "ok": False, "estimates_used": True}


@pytest.mark.parametrize(
    ("sql", "kind", "detail"),
    [
        ("SELECT 1 / 0", "division_by_zero", None),
        ("SELECT * FROM shop.orders WHERE amt = 'abc'", "type_mismatch", "column_types"),
        ("SELECT count(*) FROM generate_series(1, 200000000)", "timeout", None),
    ],
)
def test_postgres_errors_are_classified(
    demo_graph: SchemaGraph, sql: str, kind: str, detail: str | None
) -> None:
    outcome = run_checked("embedded", sql, graph=demo_graph, limits=Limits(timeout_seconds=1))
    assert outcome.error is not None, outcome.to_dict()
    assert outcome.error.type == kind
    assert outcome.error.hint
    if detail:
        assert detail in outcome.error.model_dump()


def test_sqlite_errors_are_classified(tmp_path: Path) -> None:
    """Errors the database raises (here, after the graph went stale) come back enriched."""
    path = tmp_path / "s.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);"
            "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, total REAL);"
            "INSERT INTO customers VALUES (1, 'a'); INSERT INTO orders VALUES (1, 1, 0);"
        )
    url = f"sqlite:///{path}"
    graph = load_graph(url)
    with sqlite3.connect(path) as conn:  # the schema drifts after the graph was read
        conn.executescript("ALTER TABLE orders RENAME COLUMN total TO amount")
    outcome = run_checked(url, "SELECT total FROM orders", graph=graph)
    assert outcome.error is not None and outcome.error.type == "unknown_column"
    assert outcome.error.model_dump()["tables_with_column"] == ["orders"]
    with sqlite3.connect(path) as conn:
        conn.executescript("ALTER TABLE customers RENAME TO clients")
    outcome = run_checked(url, "SELECT name FROM customers", graph=graph)
    assert outcome.error is not None and outcome.error.type == "unknown_table"
    ok = run_checked(url, "SELECT count(*) FROM orders", graph=graph)
    assert ok.ok and ok.result is not None and ok.result.rows == [[1]]


def test_duckdb_run_and_error(tmp_path: Path) -> None:
    path = tmp_path / "d.duckdb"
    conn = duckdb.connect(str(path))
    conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, price DOUBLE)")
    conn.execute("INSERT INTO items VALUES (1, 2.5), (2, 4.0)")
    conn.close()
    url = f"duckdb:///{path}"
    outcome = run_checked(url, "SELECT sum(price) FROM items")
    assert outcome.ok and outcome.result is not None and outcome.result.rows == [[6.5]]
    bad = run_checked(url, "SELECT CAST('x' AS INTEGER) FROM items")
    assert bad.error is not None and bad.error.type == "type_mismatch"


def test_cli_check_exit_codes(demo_rows: warehouse.DemoRows) -> None:
    ok = runner.invoke(app, ["check", "embedded", "--sql", "SELECT count(*) FROM shop.orders"])
    assert ok.exit_code == 0, ok.output
    bad = runner.invoke(
        app, ["check", "embedded", "--sql", "SELECT nope FROM shop.orders", "--json"]
    )
    assert bad.exit_code == 1
    doc = json.loads(bad.stdout)
    assert doc["ok"] is False and doc["errors"][0]["type"] == "unknown_column"
    assert set(doc) >= {
        "ok",
        "errors",
        "warnings",
        "tables",
        "columns",
        "joins",
        "fanout",
        "explain",
    }
    usage = runner.invoke(app, ["check", "embedded"])
    assert usage.exit_code == 2 and "--sql" in usage.output
    fan = runner.invoke(
        app, ["check", "embedded", "--sql", warehouse.FANOUT_SQL, "--fanout", "error"]
    )
    assert fan.exit_code == 1 and "fanout_risk" in fan.output


def test_cli_rules_file(tmp_path: Path, demo_rows: warehouse.DemoRows) -> None:
    rules = tmp_path / "rules.yml"
    rules.write_text(
        "rules:\n"
        "  - name: net revenue\n"
        "    when_aggregating: shop.orders.amt\n"
        "    require_filter: {column: shop.orders.status, values: [A, S]}\n"
        "    require_table: shop.refunds\n"
    )
    result = runner.invoke(
        app, ["check", "embedded", "--sql", "SELECT sum(amt) FROM shop.orders",
              "--rules", str(rules), "--json"],
    )  # fmt: skip
    assert result.exit_code == 1
    assert json.loads(result.stdout)["errors"][0]["type"] == "business_rule"


def test_cli_run_and_doctor(demo_rows: warehouse.DemoRows, embedded_url: str) -> None:
    result = runner.invoke(
        app, ["run", "embedded", "--sql", "SELECT count(*) AS n FROM shop.regions", "--json"]
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["result"]["rows"] == [[8]] and doc["stages"] == ["check", "explain", "execute"]
    human = runner.invoke(app, ["run", "embedded", "--sql", "SELECT region_id FROM shop.regions "
                                "WHERE region_id < 0"])  # fmt: skip
    assert human.exit_code == 0 and "0 rows in" in human.output
    capped = runner.invoke(app, ["run", "embedded", "--max-rows", "3", "--sql",
                                 "SELECT region_id FROM shop.regions"])  # fmt: skip
    assert "3 rows in" in capped.output and "truncated: more than 3 rows" in capped.output
    refused = runner.invoke(app, ["run", "embedded", "--sql", "SELECT 1; DELETE FROM shop.orders"])
    assert refused.exit_code == 1 and "unsafe_statement" in refused.output
    reader = runner.invoke(app, ["doctor", "embedded", "--json"])
    assert reader.exit_code == 0
    assert json.loads(reader.stdout)["findings"][0]["severity"] == "ok"
    admin = runner.invoke(app, ["doctor", embedded_url, "--json"])
    assert admin.exit_code == 1
    findings = json.loads(admin.stdout)["findings"]
    checks = {f["check"] for f in findings}
    assert "superuser" in checks and "createrole" not in checks  # one finding says it all
    [superuser] = [f for f in findings if f["check"] == "superuser"]
    assert "CREATE ROLE schemawise_reader" in superuser["fix"]
    assert "GRANT SELECT ON ALL TABLES IN SCHEMA shop TO" in superuser["fix"]


def test_another_database_of_the_embedded_server(embedded_url: str) -> None:
    """`embedded/<name>` names another database of the embedded server: schemawise makes the
    reader role's grants there too, and runs as that reader, never as the owner."""
    import psycopg

    from schemawise.db.embedded import database_url

    with psycopg.connect(database_url(embedded_url, "postgres"), autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS sales WITH (FORCE)")
        conn.execute("CREATE DATABASE sales")
    with psycopg.connect(database_url(embedded_url, "sales"), autocommit=True) as conn:
        conn.execute("CREATE SCHEMA crm")
        conn.execute("CREATE TABLE crm.deals AS SELECT g AS deal_id FROM generate_series(1, 7) g")
    done = runner.invoke(app, ["run", "embedded/sales", "--json", "--sql",
                               "SELECT count(*) FROM crm.deals"])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["result"]["rows"] == [[7]]
    # doctor inspects the role `run` used there: the reader, with the revocations in place.
    doctor = runner.invoke(app, ["doctor", "embedded/sales", "--json"])
    assert doctor.exit_code == 0, doctor.output
    assert [f["severity"] for f in json.loads(doctor.stdout)["findings"]] == ["ok"]
    missing = runner.invoke(app, ["run", "embedded/nosuchdb", "--sql", "SELECT 1"])
    # (the hint wraps at the terminal's width wherever the temporary path ends)
    assert missing.exit_code == 2 and "CREATE DATABASE" in " ".join(missing.output.split())
    bad = runner.invoke(app, ["run", "embedded/x;drop", "--sql", "SELECT 1"])
    assert bad.exit_code == 2 and "not a database name" in bad.output


def test_values_reach_the_terminal_as_text(tmp_path: Path) -> None:
    """Markup or escape sequences in a value, a column name or a file name: printed as
    written, never interpreted (third outside attack: a traceback, a terminal title, a link)."""
    path = tmp_path / "v.sqlite"
    sqlite3.connect(path).close()
    sql = (
        "SELECT '[/x]' AS v, char(27) || ']0;PWNED' || char(7) AS w, "
        "'[link=http://evil.example]click[/link]' AS \"[/bold]\""
    )
    shown = runner.invoke(app, ["run", f"sqlite:///{path}", "--sql", sql])
    assert shown.exit_code == 0, shown.output
    assert "[/x]" in shown.output and "\\x1b]0;PWNED\\x07" in shown.output
    assert "\x1b]0;" not in shown.output and "[/bold]" in shown.output
    odd_name = f"sqlite:///{tmp_path}/no[/x].sqlite"
    missing = runner.invoke(app, ["run", odd_name, "--sql", "SELECT 1"])
    assert missing.exit_code == 2 and "no[/x].sqlite" in missing.output
