"""Classification of database errors, and the EXPLAIN gate's decisions on known plans."""

from __future__ import annotations

import pytest

from schemawise.graph.model import Column, SchemaGraph, Table
from schemawise.validate.errors import classify
from schemawise.validate.explain import GateLimits, gate_duckdb, gate_postgres, gate_sqlite

GRAPH = SchemaGraph(
    dialect="postgres",
    tables=[
        Table(name="shop.orders", row_count=50_000,
              columns=[Column(name="order_id", type="integer"), Column(name="amt", type="bigint")]),
        Table(name="shop.order_items", row_count=120_000,
              columns=[Column(name="order_id", type="integer"),
                       Column(name="quantity", type="integer")]),
    ],
)  # fmt: skip


@pytest.mark.parametrize(
    ("backend", "message", "state", "kind"),
    [
        ("postgres", 'column "quantty" does not exist', "42703", "unknown_column"),
        ("postgres", 'relation "shop.order" does not exist', "42P01", "unknown_table"),
        ("postgres", 'column reference "order_id" is ambiguous', "42702", "ambiguous_column"),
        ("postgres", "operator does not exist: integer = text", "42883", "type_mismatch"),
        ("postgres", "division by zero", "22012", "division_by_zero"),
        ("postgres", "canceling statement due to statement timeout", "57014", "timeout"),
        ("postgres", "permission denied for table secrets", "42501", "permission_denied"),
        ("postgres", 'syntax error at or near "TOP"', "42601", "dialect_error"),
        ("sqlite", "no such column: quantty", None, "unknown_column"),
        ("sqlite", "no such table: order", None, "unknown_table"),
        ("sqlite", "ambiguous column name: order_id", None, "ambiguous_column"),
        ("sqlite", "interrupted", None, "timeout"),
        ("sqlite", "string or blob too big", None, "resource_limit"),
        ("duckdb", "the worker failed: OverflowError: Python int too large to convert to C int",
         None, "unreadable_value"),
        ("postgres", "a value could not be read: ValueError", None, "unreadable_value"),
        ("duckdb", "Out of Memory Error: failed to allocate data of size 1.0 GiB", None,
         "resource_limit"),
        ("postgres", "requested length too large", "54000", "resource_limit"),
        ("postgres", "out of memory", "53200", "resource_limit"),
        ("sqlite", "not authorized", None, "permission_denied"),
        ("sqlite", 'near "TOP": syntax error', None, "dialect_error"),
        ("duckdb", 'Binder Error: Referenced column "quantty" not found in FROM clause!', None,
         "unknown_column"),
        ("duckdb", "Catalog Error: Table with name order does not exist!", None, "unknown_table"),
        ("duckdb", "Conversion Error: Could not convert string 'x' to INT32", None,
         "type_mismatch"),
        ("duckdb", "Something nobody expected " + "x" * 900, None, "unknown"),
    ],
)  # fmt: skip
def test_classify(backend: str, message: str, state: str | None, kind: str) -> None:
    problem = classify(backend, message, state, graph=GRAPH, sql="SELECT 1")
    assert problem.type == kind
    assert problem.hint
    assert len(problem.message) <= 500


def test_unknown_column_is_enriched() -> None:
    problem = classify("postgres", 'column "quantity" does not exist', "42703", graph=GRAPH)
    assert problem.model_dump()["tables_with_column"] == ["shop.order_items"]


def test_an_unknown_column_no_table_has_gets_the_nearest_of_the_tables_read() -> None:
    # As `check` says it ("Did you mean amt?"): `explain_error` said nothing before.
    problem = classify("postgres", 'column "quantty" does not exist', "42703", graph=GRAPH,
                       sql="SELECT quantty FROM shop.order_items")  # fmt: skip
    assert problem.model_dump()["tables_with_column"] == []
    assert problem.model_dump()["closest"] == ["shop.order_items.quantity"]
    assert problem.hint == "Did you mean shop.order_items.quantity?"


def test_the_nearest_column_comes_first_whatever_the_tables_order() -> None:
    from schemawise.graph.model import Column, SchemaGraph, Table

    graph = SchemaGraph(dialect="sqlite", tables=[
        Table(name=name, columns=[Column(name="title", type="text")]) for name in "abc"
    ] + [Table(name="invoices", columns=[Column(name="total", type="real")])])  # fmt: skip
    problem = classify("sqlite", "no such column: totl", None, graph=graph, sql="SELECT totl")
    assert problem.model_dump()["closest"][0] == "invoices.total"


def test_the_nearest_columns_are_of_the_tables_the_query_reads() -> None:
    from schemawise.graph.model import Column, SchemaGraph, Table

    graph = SchemaGraph(dialect="sqlite", tables=[
        Table(name="orders", columns=[Column(name="amount", type="real"),
                                      Column(name="status", type="text")]),
        Table(name="status", columns=[Column(name="amount_x", type="real")]),
    ])  # fmt: skip
    # `status` is a word of the query, not a table it reads.
    problem = classify("sqlite", "no such column: o.amout", None, graph=graph,
                       sql="SELECT o.amout FROM orders o WHERE o.status = 1")  # fmt: skip
    assert problem.model_dump()["closest"] == ["orders.amount"]


def test_unknown_table_gets_closest_names() -> None:
    problem = classify("sqlite", "no such table: order_item", None, graph=GRAPH)
    assert "shop.order_items" in problem.model_dump()["closest"]


def test_dialect_error_suggests_a_transpiled_statement() -> None:
    problem = classify(
        "postgres", 'syntax error at or near "5"', "42601", graph=GRAPH,
        sql="SELECT TOP 5 amt FROM shop.orders",
    )  # fmt: skip
    suggestion = problem.model_dump()["suggestion"]
    assert "LIMIT 5" in suggestion


def test_type_mismatch_lists_column_types() -> None:
    problem = classify(
        "postgres", "operator does not exist: bigint = text", "42883", graph=GRAPH,
        sql="SELECT * FROM shop.orders WHERE amt = 'x'",
    )  # fmt: skip
    assert problem.model_dump()["column_types"] == {"shop.orders.amt": "bigint"}


def test_timeout_carries_the_plan_shape() -> None:
    problem = classify("postgres", "canceling statement", "57014", explain_summary="Seq Scan")
    assert problem.model_dump()["explain"] == "Seq Scan"


LIMITS = GateLimits(max_rows=1e6, max_cost=1e7, cross_product_rows=1e4)


def _scan(rows: float, indexed: bool = False) -> dict[str, object]:
    node: dict[str, object] = {"Node Type": "Seq Scan", "Plan Rows": rows, "Total Cost": rows}
    if indexed:
        node = {"Node Type": "Index Scan", "Plan Rows": 1, "Total Cost": 8, "Index Cond": "x"}
    return node


@pytest.mark.parametrize(
    ("plan", "refused"),
    [
        ({"Node Type": "Seq Scan", "Plan Rows": 100, "Total Cost": 10}, False),
        ({"Node Type": "Seq Scan", "Plan Rows": 5e6, "Total Cost": 10}, True),
        ({"Node Type": "Seq Scan", "Plan Rows": 10, "Total Cost": 5e7}, True),
        ({"Node Type": "Aggregate", "Plan Rows": 1, "Total Cost": 100,
          "Plans": [{"Node Type": "Nested Loop", "Plan Rows": 900, "Total Cost": 100,
                     "Plans": [_scan(5e4), _scan(5e4)]}]}, True),
        ({"Node Type": "Nested Loop", "Plan Rows": 900, "Total Cost": 100,
          "Plans": [_scan(5e4), _scan(1, indexed=True)]}, False),
        ({"Node Type": "Nested Loop", "Plan Rows": 900, "Total Cost": 100, "Join Filter": "a = b",
          "Plans": [_scan(5e4), _scan(5e4)]}, False),
        ({}, False),
    ],
)  # fmt: skip
def test_gate_postgres(plan: dict[str, object], refused: bool) -> None:
    assert (gate_postgres(plan, LIMITS) is not None) is refused


def test_gate_sqlite_uses_graph_row_counts() -> None:
    sqlite_graph = GRAPH.model_copy(deep=True)
    for t in sqlite_graph.tables:
        t.name = t.name.split(".")[1]
    assert gate_sqlite(["SCAN orders", "SCAN order_items"], sqlite_graph, LIMITS) is not None
    assert gate_sqlite(["SCAN orders", "SEARCH order_items USING INDEX x (order_id=?)"],
                       sqlite_graph, LIMITS) is None  # fmt: skip


def test_gate_duckdb_reads_estimates() -> None:
    plan = "CROSS_PRODUCT\n~50,000 rows\nSEQ_SCAN\n~50,000 rows\nSEQ_SCAN\n~120,000 rows"
    assert gate_duckdb(plan, LIMITS) is not None
    assert gate_duckdb("HASH_JOIN\n~500 rows", LIMITS) is None
