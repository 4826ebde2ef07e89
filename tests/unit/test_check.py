"""Golden cases for `check`: names, joins, fan-out, rules, on a small hand-made shop graph."""

from __future__ import annotations

import pytest

from schemawise.graph.model import Column, Edge, SchemaGraph, Table
from schemawise.validate.check import check_sql
from schemawise.validate.rules import RequiredFilter, Rule


def table(name: str, pk: list[str], *cols: str) -> Table:
    return Table(name=name, primary_key=pk, columns=[Column(name=c, type="integer") for c in cols])


def edge(child: str, col: str, parent: str, pcol: str, card: str = "many_to_one") -> Edge:
    return Edge(
        child_table=child, child_columns=[col], parent_table=parent, parent_columns=[pcol],
        cardinality=card,  # type: ignore[arg-type]
    )  # fmt: skip


GRAPH = SchemaGraph(
    dialect="sqlite",
    tables=[
        table("customers", ["customer_id"], "customer_id", "region_id", "status", "name"),
        table("orders", ["order_id"], "order_id", "customer_id", "status", "amt"),
        table("order_items", ["order_item_id"], "order_item_id", "order_id", "quantity"),
        table("shipments", ["shipment_id"], "shipment_id", "order_id", "region_id", "status"),
        table("regions", ["region_id"], "region_id", "name"),
        table("refunds", ["refund_id"], "refund_id", "order_id", "amount"),
    ],
    edges=[
        edge("orders", "customer_id", "customers", "customer_id"),
        edge("order_items", "order_id", "orders", "order_id"),
        edge("shipments", "order_id", "orders", "order_id"),
        edge("shipments", "region_id", "regions", "region_id"),
        edge("customers", "region_id", "regions", "region_id"),
        edge("refunds", "order_id", "orders", "order_id"),
    ],
)


def types(sql: str, **kwargs) -> tuple[list[str], list[str]]:  # type: ignore[no-untyped-def]
    result = check_sql(sql, GRAPH, **kwargs)
    return [p.type for p in result.errors], [p.type for p in result.warnings]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT o.status, count(*) FROM orders o JOIN customers c ON c.customer_id = o.customer_id "
        "GROUP BY o.status",
        "SELECT status FROM customers JOIN regions USING (region_id)",
        "SELECT * FROM orders NATURAL JOIN customers",
        "WITH big AS (SELECT order_id, amt FROM orders WHERE amt > 100) "
        "SELECT b.amt, oi.quantity FROM big b JOIN order_items oi ON oi.order_id = b.order_id",
        "SELECT (SELECT max(amt) FROM orders o WHERE o.customer_id = c.customer_id) "
        "FROM customers c",
        "SELECT amt AS a FROM orders ORDER BY a",
        "SELECT o.* FROM orders o WHERE o.order_id IN (SELECT order_id FROM refunds)",
        'SELECT count(*) FROM orders WHERE status = "shipped"',  # SQLite: a string literal
        "SELECT count(*) FROM orders, (SELECT avg(amt) AS m FROM orders) s WHERE amt > s.m",
        "SELECT r.name, count(DISTINCT o.order_id) FROM orders o JOIN shipments s "
        "ON s.order_id = o.order_id JOIN regions r ON r.region_id = s.region_id GROUP BY r.name",
        # A correlated subquery that compares two outer tables joins them.
        "SELECT 1 FROM orders o JOIN customers c WHERE EXISTS (SELECT 1 FROM refunds r "
        "WHERE r.order_id = o.order_id AND o.customer_id = c.customer_id)",
    ],
)
def test_correct_queries_have_no_errors(sql: str) -> None:
    errors, _ = types(sql)
    assert errors == []


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT * FROM order", "unknown_table"),
        ("SELECT * FROM ordrs", "unknown_table"),
        ("SELECT o.nope FROM orders o", "unknown_column"),
        ("SELECT nope FROM orders", "unknown_column"),
        ("SELECT x.amt FROM orders o", "unknown_table"),
        ("SELECT status FROM orders o JOIN customers c ON c.customer_id = o.customer_id",
         "ambiguous_column"),
        ("SELECT 1 FROM orders o JOIN shipments s ON o.order_id = s.shipment_id", "wrong_join_key"),
        ("SELECT 1 FROM orders o, customers c", "cartesian_join"),
        ("SELECT 1 FROM orders o JOIN customers c ON o.order_id = o.customer_id", "cartesian_join"),
        ("SELECT 1; SELECT 2", "unsafe_statement"),
        # The subquery's own o and c (its join) say nothing of the outer o and c.
        ("SELECT o.amt FROM orders o JOIN customers c WHERE o.amt > (SELECT avg(o.amt) "
         "FROM orders o JOIN customers c ON c.customer_id = o.customer_id)", "cartesian_join"),
    ],
)  # fmt: skip
def test_defects_are_errors(sql: str, expected: str) -> None:
    errors, _ = types(sql)
    assert expected in errors


def test_unknown_table_suggests_closest() -> None:
    [problem] = check_sql("SELECT * FROM ordrs", GRAPH).errors
    assert problem.model_dump()["closest"][0] == "orders"
    assert "orders" in problem.hint


def test_unknown_column_says_where_it_exists() -> None:
    [problem] = check_sql("SELECT o.quantity FROM orders o", GRAPH).errors
    assert problem.model_dump()["tables_with_column"] == ["order_items"]


def test_wrong_join_key_gives_the_right_one() -> None:
    [problem] = check_sql(
        "SELECT 1 FROM orders o JOIN shipments s ON o.order_id = s.shipment_id", GRAPH
    ).errors
    assert "shipments.order_id = orders.order_id" in problem.hint


def test_unknown_join_is_a_warning() -> None:
    errors, warnings = types("SELECT 1 FROM refunds r JOIN regions g ON g.region_id = r.amount")
    assert errors == [] and warnings == ["unknown_join"]


def test_explicit_cross_join_is_a_warning() -> None:
    errors, warnings = types("SELECT 1 FROM regions r CROSS JOIN customers c")
    assert errors == [] and "cartesian_join" in warnings


OPENING = (
    "SELECT o.status, SUM(oi.quantity) FROM orders o "
    "JOIN order_items oi ON oi.order_id = o.order_id "
    "JOIN shipments s ON s.order_id = o.order_id GROUP BY o.status"
)


def test_opening_example_names_the_multiplying_edge() -> None:
    result = check_sql(OPENING, GRAPH, fanout="error")
    [problem] = result.errors
    assert problem.type == "fanout_risk"
    details = problem.model_dump()
    assert details["edge"] == "orders → shipments"
    assert details["table"] == "order_items"
    assert problem.hint.startswith("Aggregate shipments by shipments.order_id in a CTE")
    assert result.fanout == result.errors


def test_fanout_is_a_warning_by_default() -> None:
    errors, warnings = types(OPENING)
    assert errors == [] and warnings == ["fanout_risk"]


@pytest.mark.parametrize(
    ("sql", "risky"),
    [
        ("SELECT sum(o.amt) FROM orders o JOIN order_items oi ON oi.order_id = o.order_id", True),
        ("SELECT avg(o.amt) FROM orders o JOIN order_items oi ON oi.order_id = o.order_id", True),
        ("SELECT count(o.amt) FROM orders o JOIN order_items oi ON oi.order_id = o.order_id", True),
        ("SELECT count(DISTINCT o.order_id) FROM orders o JOIN order_items oi "
         "ON oi.order_id = o.order_id", False),
        ("SELECT max(o.amt) FROM orders o JOIN order_items oi ON oi.order_id = o.order_id", False),
        ("SELECT sum(oi.quantity) FROM orders o JOIN order_items oi ON oi.order_id = o.order_id",
         False),
        ("SELECT c.name, sum(o.amt) FROM orders o JOIN customers c "
         "ON c.customer_id = o.customer_id GROUP BY c.name", False),
        ("WITH q AS (SELECT order_id, sum(quantity) AS units FROM order_items GROUP BY order_id) "
         "SELECT sum(q.units) FROM orders o JOIN q ON q.order_id = o.order_id "
         "JOIN shipments s ON s.order_id = o.order_id", False),
        ("SELECT oi.order_item_id, sum(o.amt) FROM orders o JOIN order_items oi "
         "ON oi.order_id = o.order_id GROUP BY oi.order_item_id", False),
        ("SELECT count(*) FROM orders o JOIN order_items oi ON oi.order_id = o.order_id", False),
        ("SELECT count(*) FROM orders o JOIN order_items oi ON oi.order_id = o.order_id "
         "JOIN shipments s ON s.order_id = o.order_id", True),
        ("SELECT o.status FROM orders o JOIN order_items oi ON oi.order_id = o.order_id "
         "GROUP BY o.status ORDER BY sum(o.amt) DESC", True),
    ],
)  # fmt: skip
def test_fanout_cases(sql: str, risky: bool) -> None:
    assert bool(check_sql(sql, GRAPH).fanout) is risky


@pytest.mark.parametrize(
    ("sql", "refused"),
    [
        ("SELECT sum(o.amt) FROM orders o JOIN order_items oi ON oi.order_id = o.order_id", True),
        ("SELECT avg(o.amt) FROM orders o JOIN order_items oi ON oi.order_id = o.order_id", True),
        ("SELECT count(o.amt) FROM orders o JOIN order_items oi ON oi.order_id = o.order_id",
         False),
        ("SELECT count(*) FROM orders o JOIN order_items oi ON oi.order_id = o.order_id "
         "JOIN shipments s ON s.order_id = o.order_id", False),
    ],
)  # fmt: skip
def test_auto_fanout_refuses_only_a_sum_or_average(sql: str, refused: bool) -> None:
    """`auto` (run's default): a SUM or AVG over repeated rows is wrong whatever the data,
    so it is an error; a COUNT may be what was meant, so it warns."""
    result = check_sql(sql, GRAPH, fanout="auto")
    assert result.fanout
    assert bool([p for p in result.errors if p.type == "fanout_risk"]) is refused
    assert bool([p for p in result.warnings if p.type == "fanout_risk"]) is not refused


# Two children one to one with orders (one shipment, one invoice an order at most) beside one
# that is many per order: joined to each other on their references to orders.
ONE_TO_ONE = SchemaGraph(
    dialect="sqlite",
    tables=[
        table("orders", ["order_id"], "order_id", "amt"),
        table("shipments", ["order_id"], "order_id", "carrier"),
        table("invoices", ["order_id"], "order_id", "amount"),
        table("order_items", ["order_item_id"], "order_item_id", "order_id", "quantity"),
    ],
    edges=[
        edge("shipments", "order_id", "orders", "order_id", "one_to_one"),
        edge("invoices", "order_id", "orders", "order_id", "one_to_one"),
        edge("order_items", "order_id", "orders", "order_id"),
    ],
)


@pytest.mark.parametrize(
    ("sql", "risky"),
    [
        # One row meets one: no aggregate repeats (was refused as many-to-many).
        ("SELECT s.carrier, sum(i.amount) FROM shipments s JOIN invoices i "
         "ON i.order_id = s.order_id GROUP BY s.carrier", False),
        ("SELECT sum(s.order_id) FROM shipments s JOIN invoices i ON i.order_id = s.order_id",
         False),
        # A one-to-one side against a many side: its rows repeat, the many side's do not.
        ("SELECT sum(i.amount) FROM invoices i JOIN order_items oi ON oi.order_id = i.order_id",
         True),
        ("SELECT sum(oi.quantity) FROM invoices i JOIN order_items oi "
         "ON oi.order_id = i.order_id", False),
        ("SELECT sum(oi.quantity) FROM order_items oi JOIN invoices i "
         "ON i.order_id = oi.order_id", False),
    ],
)  # fmt: skip
def test_a_join_between_children_of_one_parent_takes_their_cardinalities(
    sql: str, risky: bool
) -> None:
    result = check_sql(sql, ONE_TO_ONE, fanout="auto")
    assert bool(result.fanout) is risky, [p.message for p in result.fanout]
    assert not result.errors or risky, [p.message for p in result.errors]


NET_REVENUE = Rule(
    name="net revenue",
    when_aggregating="orders.amt",
    require_filter=RequiredFilter(column="orders.status", values=["A", "S"]),
    require_table="refunds",
)


@pytest.mark.parametrize(
    ("sql", "broken"),
    [
        ("SELECT sum(amt) FROM orders", True),
        ("SELECT sum(o.amt) FROM orders o WHERE o.status IN ('A', 'S', 'C')", True),
        ("SELECT sum(o.amt) FROM orders o WHERE o.status IN ('A', 'S')", True),  # no refunds
        ("SELECT sum(o.amt) - (SELECT sum(amount) FROM refunds) FROM orders o "
         "WHERE o.status IN ('A', 'S')", False),
        ("SELECT sum(o.amt) - (SELECT sum(amount) FROM refunds) FROM orders o "
         "WHERE o.status = 'S'", False),
        ("SELECT count(*) FROM orders", False),  # the rule's column is not aggregated
    ],
)  # fmt: skip
def test_business_rule(sql: str, broken: bool) -> None:
    errors = [p.type for p in check_sql(sql, GRAPH, rules=[NET_REVENUE]).errors]
    assert ("business_rule" in errors) is broken


_SPELLING = SchemaGraph(
    dialect="postgres",
    tables=[
        Table(name="shop.orders", columns=[Column(name=c, type="int") for c in
              ("order_id", "customer_id", "amount", "status")]),
        Table(name="shop.customers", columns=[Column(name=c, type="int") for c in
              ("customer_id", "name")]),
    ],
)  # fmt: skip


@pytest.mark.parametrize(
    ("sql", "closest"),
    [
        ("SELECT amout FROM shop.orders", ["amount"]),
        ("SELECT o.amout FROM shop.orders o", ["amount"]),
        ("SELECT c.nmae FROM shop.orders o JOIN shop.customers c "
         "ON c.customer_id = o.customer_id", ["name"]),
        ("SELECT o.zzzz FROM shop.orders o", []),
    ],
)  # fmt: skip
def test_an_unknown_column_gets_a_did_you_mean(sql: str, closest: list[str]) -> None:
    [problem] = [p for p in check_sql(sql, _SPELLING).errors if p.type == "unknown_column"]
    assert problem.model_dump()["closest"] == closest
    if closest:
        assert f"Did you mean {closest[0]}?" == problem.hint


def test_a_wrong_join_key_hint_suggests_the_direct_relationship() -> None:
    """Customer.SupportRepId → Employee.EmployeeId, and Employee.ReportsTo → Employee too:
    the two share a parent, but the hint names the direct key, not the sibling pair."""
    graph = SchemaGraph(
        dialect="sqlite",
        tables=[
            Table(name="Customer", columns=[Column(name=c, type="int") for c in
                  ("CustomerId", "SupportRepId")]),
            Table(name="Employee", columns=[Column(name=c, type="int") for c in
                  ("EmployeeId", "ReportsTo")]),
        ],
        edges=[
            Edge(child_table="Customer", child_columns=["SupportRepId"], parent_table="Employee",
                 parent_columns=["EmployeeId"], cardinality="many_to_one",
                 source="foreign_key"),
            Edge(child_table="Employee", child_columns=["ReportsTo"], parent_table="Employee",
                 parent_columns=["EmployeeId"], cardinality="many_to_one",
                 source="foreign_key"),
        ],
    )  # fmt: skip
    sql = "SELECT 1 FROM Customer c JOIN Employee e ON c.CustomerId = e.EmployeeId"
    [problem] = check_sql(sql, graph).errors
    assert problem.type == "wrong_join_key"
    assert problem.model_dump()["expected"] == ["Customer.SupportRepId = Employee.EmployeeId"]


def test_a_quoted_name_of_the_wrong_case_is_said_so() -> None:
    graph = SchemaGraph(dialect="postgres", tables=[table("customers", ["id"], "id", "name")])
    problem = check_sql('SELECT "Name" FROM customers', graph).errors[0]
    assert problem.type == "unknown_column"
    assert "case-sensitive: the column is name" in problem.hint


@pytest.mark.parametrize(
    "sql",
    [
        # On the wrong alias: the table that has it is already read, as `o`.
        "SELECT c.amount FROM shop.customers c JOIN shop.orders o ON c.customer_id = o.customer_id",
        # Bare, in a query whose only holder is read as `o`.
        "SELECT c.name FROM shop.customers c JOIN shop.orders o "
        "ON c.customer_id = o.customer_id WHERE c.status = 'S'",
    ],
)
def test_a_column_of_a_table_already_read_says_which_alias_to_write(sql: str) -> None:
    [problem] = [p for p in check_sql(sql, _SPELLING).errors if p.type == "unknown_column"]
    column = problem.model_dump()["column"]
    assert problem.hint.endswith(f"which this query reads as o: write o.{column}.")


def _with_orphans(inclusion: float) -> SchemaGraph:
    """The shop graph with `refunds.order_id → orders` measured: that share of refunds' order
    ids are in orders."""
    graph = GRAPH.model_copy(deep=True)
    for e in graph.edges:
        if e.child_table == "refunds":
            e.evidence.inclusion = inclusion
    return graph


@pytest.mark.parametrize(
    ("sql", "inclusion", "warned"),
    [
        # An inner join, written either way, drops the refunds whose order is missing.
        ("SELECT count(*) FROM refunds r JOIN orders o ON o.order_id = r.order_id", 0.9, True),
        ("SELECT count(*) FROM orders o, refunds r WHERE o.order_id = r.order_id", 0.9, True),
        # None of the values match: the join returns nothing.
        ("SELECT count(*) FROM refunds r JOIN orders o ON o.order_id = r.order_id", 0.0, True),
        # An outer join keeps them; a join with no orphans has nothing to say.
        (
            "SELECT count(*) FROM refunds r LEFT JOIN orders o ON o.order_id = r.order_id",
            0.9,
            False,
        ),
        (
            "SELECT count(*) FROM orders o RIGHT JOIN refunds r ON o.order_id = r.order_id",
            0.9,
            False,
        ),
        ("SELECT count(*) FROM refunds r JOIN orders o ON o.order_id = r.order_id", 1.0, False),
    ],
)
def test_an_inner_join_over_orphans_is_a_warning(sql: str, inclusion: float, warned: bool) -> None:
    result = check_sql(sql, _with_orphans(inclusion))
    orphans = [p for p in result.warnings if p.type == "orphan_join"]
    assert result.ok
    assert len(orphans) == (1 if warned else 0)
    if warned and inclusion == 0.0:
        assert "returns no rows" in orphans[0].message
    elif warned:
        assert orphans[0].message.startswith("10% of the values of refunds.order_id")


PG = SchemaGraph(
    dialect="postgres",
    tables=[
        table("sales.orders", ["ord_id"], "ord_id", "cust_id"),
        table("crm.customers", ["cust_id"], "cust_id", "segment"),
        table("public.regions", ["region_id"], "region_id", "name"),
    ],
    edges=[edge("sales.orders", "cust_id", "crm.customers", "cust_id")],
)


@pytest.mark.parametrize(
    ("sql", "unknown"),
    [
        # Guarded runs look bare names up on pg_catalog, public: `orders` is not sales.orders.
        ("SELECT count(*) FROM orders", ["orders"]),
        ("SELECT count(*) FROM orders o JOIN customers c ON c.cust_id = o.cust_id",
         ["orders", "customers"]),
        ("SELECT count(*) FROM sales.orders o JOIN crm.customers c ON c.cust_id = o.cust_id", []),
        # A table of the public schema is found by its bare name, as Postgres finds it.
        ("SELECT name FROM regions", []),
    ],
)  # fmt: skip
def test_a_bare_postgres_name_is_looked_up_on_the_search_path(sql: str, unknown: list[str]) -> None:
    result = check_sql(sql, PG)
    problems = [p for p in result.errors if p.type == "unknown_table"]
    assert [p.model_dump()["table"] for p in problems] == unknown
    for problem in problems:
        assert "search path" in problem.message and "Write the schema" in problem.hint


def test_the_fanout_hint_names_the_column_to_pre_aggregate_by() -> None:
    # The join that repeats orders starts at orders itself: pre-aggregating orders changes
    # nothing; the many side, order_items, is what to aggregate first.
    [problem] = check_sql(
        "SELECT sum(o.amt) FROM orders o JOIN order_items oi ON oi.order_id = o.order_id", GRAPH
    ).fanout
    assert problem.hint.startswith("Aggregate order_items by order_items.order_id in a CTE")
    assert "the SUM over orders without joining order_items" in problem.hint


def test_the_fanout_hint_aggregates_the_repeating_side_whatever_the_join_starts_from() -> None:
    # order_items → orders → refunds: pre-aggregating order_items per order would still be
    # doubled by two refunds (5 + 7 = 12 read as 24); the refunds are what to aggregate first.
    [problem] = check_sql(
        "SELECT sum(oi.quantity) FROM order_items oi JOIN orders o ON o.order_id = oi.order_id "
        "JOIN refunds r ON r.order_id = o.order_id", GRAPH,
    ).fanout  # fmt: skip
    assert problem.hint.startswith("Aggregate refunds by refunds.order_id in a CTE")


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM pg_stat_activity",
        "SELECT * FROM information_schema.tables",
        "SELECT name FROM sqlite_master",
    ],
)
def test_a_system_catalog_is_named_as_one_not_as_missing(sql: str) -> None:
    errors = [p for p in check_sql(sql, PG).errors if p.type == "unknown_table"]
    assert errors and "is a system catalog" in errors[0].message, errors


REFERRALS = SchemaGraph(
    dialect="sqlite",
    tables=[
        table("accounts", ["id"], "id", "name"),
        table("profiles", ["account_id"], "account_id", "referrer_account_id", "balance"),
    ],
    edges=[
        edge("profiles", "account_id", "accounts", "id", "one_to_one"),
        edge("profiles", "referrer_account_id", "accounts", "id"),
    ],
)


@pytest.mark.parametrize(
    ("sql", "risky"),
    [
        # r is the referrer (one row a profile), p the referred (many per referrer): r's rows
        # repeat, p's do not, whichever side of `=` each is written on.
        ("SELECT sum(r.balance) FROM profiles p JOIN profiles r "
         "ON r.account_id = p.referrer_account_id", True),
        ("SELECT sum(r.balance) FROM profiles p JOIN profiles r "
         "ON p.referrer_account_id = r.account_id", True),
        ("SELECT sum(p.balance) FROM profiles p JOIN profiles r "
         "ON r.account_id = p.referrer_account_id", False),
        ("SELECT sum(p.balance) FROM profiles p JOIN profiles r "
         "ON p.referrer_account_id = r.account_id", False),
    ],
)  # fmt: skip
def test_a_self_join_through_a_parent_repeats_the_side_its_column_says(
    sql: str, risky: bool
) -> None:
    assert bool(check_sql(sql, REFERRALS, fanout="auto").fanout) is risky


def test_a_one_to_one_measured_on_a_sample_is_trusted_as_a_direct_join_trusts_it() -> None:
    # A large table's uniqueness is measured on a sample: refusing these joins for it would
    # refuse every correct one on a large database, and a direct join trusts it the same way.
    sampled = ONE_TO_ONE.model_copy(deep=True)
    for e in sampled.edges:
        e.evidence.sampled = True
    sql = "SELECT sum(s.carrier) FROM shipments s JOIN invoices i ON i.order_id = s.order_id"
    assert not check_sql(sql, sampled, fanout="auto").fanout
    direct = "SELECT sum(o.amt) FROM orders o JOIN invoices i ON i.order_id = o.order_id"
    assert not check_sql(direct, sampled, fanout="auto").fanout


@pytest.mark.parametrize(
    ("sql", "risky"),
    [
        # The repeat made inside a CTE, summed outside it.
        ("WITH j AS (SELECT o.amt, oi.quantity FROM orders o JOIN order_items oi "
         "ON oi.order_id = o.order_id) SELECT sum(amt) FROM j", True),
        # ... in a derived table, its columns read through `*`.
        ("SELECT sum(x.amt) FROM (SELECT * FROM orders o JOIN order_items oi "
         "ON oi.order_id = o.order_id) x", True),
        # ... two levels down, renamed on the way.
        ("SELECT sum(y.a) FROM (SELECT x.amt AS a FROM (SELECT o.amt FROM orders o "
         "JOIN refunds r ON r.order_id = o.order_id) x) y", True),
        # ... with the outer SELECT joining on and grouping by something else.
        ("SELECT c.name, sum(x.amt) FROM customers c JOIN (SELECT o.customer_id, o.amt "
         "FROM orders o JOIN order_items oi ON oi.order_id = o.order_id) x "
         "ON x.customer_id = c.customer_id GROUP BY c.name", True),
        # The many side's own column is not repeated by its many-to-one join.
        ("WITH j AS (SELECT o.amt, oi.quantity FROM orders o JOIN order_items oi "
         "ON oi.order_id = o.order_id) SELECT sum(quantity) FROM j", False),
        # Grouped outside by the summed table's key: each order's group still holds one row
        # per item (100 × 3 summed as 300).
        ("WITH j AS (SELECT o.order_id, o.amt FROM orders o JOIN order_items oi "
         "ON oi.order_id = o.order_id) SELECT order_id, sum(amt) FROM j GROUP BY order_id",
         True),
        # Grouped by the repeating side's key, as written or renamed: one item a group.
        ("WITH j AS (SELECT oi.order_item_id, o.amt FROM orders o JOIN order_items oi "
         "ON oi.order_id = o.order_id) SELECT order_item_id, sum(amt) FROM j "
         "GROUP BY order_item_id", False),
        ("WITH j AS (SELECT oi.order_item_id AS k, o.amt FROM orders o JOIN order_items oi "
         "ON oi.order_id = o.order_id) SELECT k, sum(amt) FROM j GROUP BY k", False),
        # One row of each repeat kept (a window numbering them, QUALIFY): the usual fix.
        ("WITH j AS (SELECT o.amt, row_number() OVER (PARTITION BY o.order_id ORDER BY "
         "oi.order_item_id) AS rn FROM orders o JOIN order_items oi ON oi.order_id = o.order_id) "
         "SELECT sum(amt) FROM j WHERE rn = 1", False),
        # A CASE's condition reads the one side; its value is the many side's own.
        ("WITH j AS (SELECT CASE WHEN o.status = 's' THEN oi.quantity ELSE 0 END AS q "
         "FROM orders o JOIN order_items oi ON oi.order_id = o.order_id) SELECT sum(q) FROM j",
         False),
        ("WITH j AS (SELECT CASE WHEN oi.quantity > 1 THEN o.amt ELSE 0 END AS q "
         "FROM orders o JOIN order_items oi ON oi.order_id = o.order_id) SELECT sum(q) FROM j",
         True),
        # A CTE that joins only to the one side keeps the grain.
        ("WITH j AS (SELECT o.amt FROM orders o JOIN customers c "
         "ON c.customer_id = o.customer_id) SELECT sum(amt) FROM j", False),
        # DISTINCT and GROUP BY inside hand on new rows, not repeats.
        ("WITH j AS (SELECT DISTINCT o.order_id, o.amt FROM orders o JOIN order_items oi "
         "ON oi.order_id = o.order_id) SELECT sum(amt) FROM j", False),
        ("WITH j AS (SELECT o.order_id, max(o.amt) AS amt FROM orders o JOIN order_items oi "
         "ON oi.order_id = o.order_id GROUP BY o.order_id) SELECT sum(amt) FROM j", False),
        # Pre-aggregated as the hint says, then joined: correct.
        ("WITH q AS (SELECT order_id, sum(quantity) AS units FROM order_items GROUP BY order_id) "
         "SELECT sum(o.amt), sum(q.units) FROM orders o JOIN q ON q.order_id = o.order_id", False),
    ],
)  # fmt: skip
def test_a_fanout_made_inside_a_cte_or_derived_table_is_found_where_it_is_summed(
    sql: str, risky: bool
) -> None:
    fanout = check_sql(sql, GRAPH, fanout="auto").fanout
    assert bool(fanout) is risky, [p.message for p in fanout]


def test_a_fanout_through_a_cte_names_it_and_is_refused() -> None:
    result = check_sql(
        "WITH j AS (SELECT o.amt FROM orders o JOIN order_items oi ON oi.order_id = o.order_id) "
        "SELECT sum(amt) FROM j",
        GRAPH,
        fanout="auto",
    )
    [problem] = result.fanout
    assert problem in result.errors
    assert "inside j" in problem.message and "order_items" in problem.message
    assert problem.model_dump()["through"] == "j"


@pytest.mark.parametrize(
    ("sql", "risky"),
    [
        ("SELECT total(o.amt) FROM orders o JOIN order_items oi ON oi.order_id = o.order_id", True),
        ("SELECT total(oi.quantity) FROM orders o JOIN order_items oi "
         "ON oi.order_id = o.order_id", False),
        # Behind casts and parentheses the join is the same.
        ("SELECT sum(o.amt) FROM orders o JOIN order_items oi "
         "ON CAST(oi.order_id AS INTEGER) = (o.order_id)", True),
        ("SELECT sum(o.amt) FROM orders o, order_items oi "
         "WHERE oi.order_id IS NOT DISTINCT FROM o.order_id", True),
    ],
)  # fmt: skip
def test_sqlite_total_and_cast_join_keys_are_read(sql: str, risky: bool) -> None:
    fanout = check_sql(sql, GRAPH, fanout="auto").fanout
    assert bool(fanout) is risky
    assert all(p in check_sql(sql, GRAPH, fanout="auto").errors for p in fanout)


def test_a_quoted_output_name_is_matched_as_written() -> None:
    # `"Amt"` is o.amt, repeated; `amt` is the item's quantity, which is not.
    sql = (
        'WITH j AS (SELECT o.amt AS "Amt", oi.quantity AS amt FROM orders o JOIN order_items oi '
        "ON oi.order_id = o.order_id) SELECT sum(j.amt) FROM j"
    )
    assert check_sql(sql, GRAPH.model_copy(update={"dialect": "postgres"})).fanout == []


def test_lineage_through_many_wide_ctes_is_followed_once_per_column() -> None:
    # Each CTE's columns are made of every column of the one before: followed path by path,
    # seven levels of six columns are 6^7 steps; once per column, a few dozen.
    width, depth = 6, 6
    ctes = ["t0 AS (SELECT " + ", ".join(f"o.amt AS c{i}" for i in range(width))
            + " FROM orders o JOIN order_items oi ON oi.order_id = o.order_id)"]  # fmt: skip
    for level in range(1, depth + 1):
        made = " + ".join(f"t{level - 1}.c{i}" for i in range(width))
        ctes.append(f"t{level} AS (SELECT " + ", ".join(f"{made} AS c{i}" for i in range(width))
                    + f" FROM t{level - 1})")  # fmt: skip
    sql = "WITH " + ", ".join(ctes) + f" SELECT sum(t{depth}.c0) FROM t{depth}"
    problems = check_sql(sql, GRAPH, fanout="auto").fanout
    assert [p.model_dump()["through"] for p in problems] == ["t0"]


@pytest.mark.parametrize(
    ("sql", "risky"),
    [
        # A derived table that only filters orders is orders: joined to its items, repeated.
        ("SELECT sum(x.amt) FROM (SELECT order_id, amt FROM orders WHERE amt > 0) x "
         "JOIN order_items oi ON oi.order_id = x.order_id", True),
        ("SELECT sum(x.amt) FROM (SELECT * FROM orders) x "
         "JOIN order_items oi ON oi.order_id = x.order_id", True),
        # The items' own quantities are not repeated by their order.
        ("SELECT sum(oi.quantity) FROM (SELECT order_id, amt FROM orders WHERE amt > 0) x "
         "JOIN order_items oi ON oi.order_id = x.order_id", False),
        # Renamed outputs are not the table's columns: not read as the table (and no error).
        ("SELECT sum(x.amt) FROM (SELECT order_id AS oid, amt FROM orders) x "
         "JOIN order_items oi ON oi.order_id = x.oid", False),
    ],
)  # fmt: skip
def test_a_derived_table_that_only_filters_one_table_joins_as_that_table(
    sql: str, risky: bool
) -> None:
    result = check_sql(sql, GRAPH, fanout="auto")
    assert bool(result.fanout) is risky
    assert [p.type for p in result.errors if p.type != "fanout_risk"] == []
