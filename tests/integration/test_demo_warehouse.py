"""The demo warehouse's graph: every edge with the right cardinality, and the fan-out caught."""

from __future__ import annotations

import psycopg
import pytest

from schemawise.db.postgres import PostgresSource
from schemawise.demo import warehouse
from schemawise.graph.extract import ExtractOptions, extract_graph
from schemawise.graph.model import SchemaGraph
from schemawise.graph.paths import connecting_tree, shortest_join_path

# (child, child column, parent, parent column) → (cardinality, source)
EXPECTED_EDGES = {
    ("sales_reps", "region_id", "regions", "region_id"): ("many_to_one", "foreign_key"),
    ("customers", "region_id", "regions", "region_id"): ("many_to_one", "foreign_key"),
    # The trap: declared, but sales_reps returns its inherited history too.
    ("customers", "rep_id", "sales_reps", "rep_id"): ("many_to_many", "foreign_key"),
    ("orders", "customer_id", "customers", "customer_id"): ("many_to_one", "foreign_key"),
    ("order_items", "order_id", "orders", "order_id"): ("many_to_one", "foreign_key"),
    ("order_items", "product_id", "products", "product_id"): ("many_to_one", "foreign_key"),
    ("shipments", "order_id", "orders", "order_id"): ("many_to_one", "foreign_key"),
    ("shipments", "region_id", "regions", "region_id"): ("many_to_one", "foreign_key"),
    ("refunds", "order_id", "orders", "order_id"): ("many_to_one", "foreign_key"),
    # Undeclared legacy joins, found by name and confirmed by the data and the query log.
    ("legacy_crm_notes", "cust_ref", "customers", "customer_id"): ("many_to_one", None),
    ("legacy_crm_notes", "order_id", "orders", "order_id"): ("many_to_one", None),
    ("legacy_crm_notes", "prod_sku", "products", "sku"): ("many_to_one", None),
    ("sales_reps_history", "region_id", "regions", "region_id"): ("many_to_one", None),
    ("sales_reps_history", "rep_id", "sales_reps", "rep_id"): ("many_to_many", None),
    # The view carries orders' key once per order, and customers' key many times.
    ("v_order_summary", "order_id", "orders", "order_id"): ("one_to_one", "view_lineage"),
    ("v_order_summary", "customer_id", "customers", "customer_id"): ("many_to_one", "view_lineage"),
}


def _key(edge) -> tuple[str, str, str, str]:  # type: ignore[no-untyped-def]
    return (
        edge.child_table.removeprefix("shop."),
        edge.child_columns[0],
        edge.parent_table.removeprefix("shop."),
        edge.parent_columns[0],
    )


def test_every_edge_has_the_right_cardinality(demo_graph: SchemaGraph) -> None:
    found = {_key(e): e for e in demo_graph.edges if e.via is None}
    assert set(found) == set(EXPECTED_EDGES)
    for key, (cardinality, source) in EXPECTED_EDGES.items():
        edge = found[key]
        assert edge.cardinality == cardinality, key
        if source is not None:
            assert edge.source == source, key
        else:
            assert edge.source in {"inferred_name", "query_log"}, key
            assert edge.evidence.inclusion is not None and edge.evidence.inclusion >= 0.95
    assert not demo_graph.partial


def test_non_unique_parent_is_measured_not_assumed(demo_graph: SchemaGraph) -> None:
    [edge] = [e for e in demo_graph.edges if _key(e)[:2] == ("customers", "rep_id")]
    assert edge.evidence.parent_unique is False
    assert edge.evidence.cardinality_basis == "declared+measured"
    assert any("not unique in the data" in note for note in edge.evidence.notes)


def test_tables_views_and_keys(demo_graph: SchemaGraph) -> None:
    kinds = {t.name: t.kind for t in demo_graph.tables}
    assert kinds["shop.v_order_summary"] == "view"
    assert kinds["shop.mv_daily_revenue_old"] == "materialized_view"
    summary = demo_graph.table("shop.v_order_summary")
    assert summary is not None and set(summary.reads) == {"shop.orders", "shop.customers"}
    products = demo_graph.table("products")  # bare names resolve when unambiguous
    assert products is not None and products.unique == [["sku"]]
    orders = demo_graph.table("shop.orders")
    assert orders is not None and orders.primary_key == ["order_id"]
    status = orders.column("status")
    assert status is not None and status.comment and "S=shipped" in status.comment
    assert status.nullable is False
    mv = demo_graph.table("shop.mv_daily_revenue_old")
    assert mv is not None and mv.comment and mv.comment.startswith("DEPRECATED")


def test_opening_example_is_several_times_too_high(
    embedded_url: str, demo_rows: warehouse.DemoRows
) -> None:
    truth = warehouse.true_units_of_shipped_orders(demo_rows)
    with psycopg.connect(embedded_url) as conn:
        naive = dict(conn.execute(warehouse.FANOUT_SQL).fetchall())  # type: ignore[arg-type]
        fixed = dict(conn.execute(warehouse.FIXED_SQL).fetchall())  # type: ignore[arg-type]
    assert fixed == truth  # the pre-aggregated query is right
    assert naive["S"] > 2 * truth["S"]  # the naive one multiplies by the shipments per order


def test_fanout_path_names_the_multiplying_tables(demo_graph: SchemaGraph) -> None:
    path = connecting_tree(demo_graph, ["orders", "order_items", "shipments"])
    assert "fan-out" in path.grain
    assert any(
        "SUM over shop.order_items after joining shop.shipments double-counts" in w
        for w in path.warnings
    )


def test_bridge_table_joins_orders_to_regions(demo_graph: SchemaGraph) -> None:
    path = shortest_join_path(demo_graph, "shop.orders", "shop.regions")
    # Either through shipments (delivery region) or customers (home region): both are
    # declared two-hop paths; the path must say which keys it uses.
    assert len(path.edges) == 2
    assert path.tables[0] == "shop.orders" and path.tables[-1] == "shop.regions"


def test_demo_is_deterministic() -> None:
    first, second = warehouse.generate(), warehouse.generate()
    assert first.tables == second.tables
    assert len(first.tables["shop.orders"]) == 40000


def test_no_data_checks_keeps_declared_cardinality(
    embedded_url: str, demo_rows: warehouse.DemoRows
) -> None:
    with PostgresSource(embedded_url, schemas=["shop"]) as source:
        graph = extract_graph(source, ExtractOptions(data_checks=False))
    edges = {_key(e): e for e in graph.edges if e.via is None}
    # Without data the trap is invisible: that is why the checks exist.
    assert edges[("customers", "rep_id", "sales_reps", "rep_id")].cardinality == "many_to_one"
    assert edges[("customers", "rep_id", "sales_reps", "rep_id")].evidence.cardinality_basis == (
        "declared"
    )
    # Undeclared joins that need no data to be believed are still found by name.
    assert ("legacy_crm_notes", "order_id", "orders", "order_id") in edges


@pytest.mark.parametrize("table", ["shop.orders", "shop.order_items", "shop.shipments"])
def test_row_counts_come_from_the_catalog(
    demo_graph: SchemaGraph, demo_rows: warehouse.DemoRows, table: str
) -> None:
    found = demo_graph.table(table)
    assert found is not None and found.row_count == len(demo_rows.tables[table])
