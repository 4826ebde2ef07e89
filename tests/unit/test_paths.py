import pytest

from schemawise.errors import NoJoinPathError, TableNotFoundError
from schemawise.graph.model import Column, Edge, SchemaGraph, Table
from schemawise.graph.paths import (
    PathEdge,
    connecting_tree,
    grain_and_warnings,
    orphan_share,
    orphan_warning,
    shortest_join_path,
)


def t(name: str) -> Table:
    return Table(name=name, primary_key=["id"], columns=[Column(name="id", type="int")])


def e(child: str, parent: str, col: str, card: str = "many_to_one", source: str = "foreign_key",
      confidence: float = 1.0) -> Edge:  # fmt: skip
    return Edge(child_table=child, child_columns=[col], parent_table=parent, parent_columns=["id"],
                cardinality=card, source=source, confidence=confidence)  # type: ignore[arg-type]  # fmt: skip


SHOP = SchemaGraph(
    tables=[t(n) for n in ["orders", "order_items", "shipments", "regions", "customers", "island"]],
    edges=[
        e("order_items", "orders", "order_id"),
        e("shipments", "orders", "order_id"),
        e("shipments", "regions", "region_id"),
        e("orders", "customers", "customer_id"),
    ],
)


def test_shortest_path_goes_through_the_bridge_table() -> None:
    path = shortest_join_path(SHOP, "orders", "regions")
    assert path.tables == ["orders", "shipments", "regions"]
    assert [(x.left, x.right) for x in path.edges] == [
        ("shipments", "orders"),
        ("shipments", "regions"),
    ]
    assert path.grain == "one row per shipments row"


def test_opening_example_warns_of_double_counting() -> None:
    path = connecting_tree(SHOP, ["orders", "order_items", "shipments"])
    assert set(path.tables) == {"orders", "order_items", "shipments"}
    assert "fan-out" in path.grain
    [warning] = path.warnings
    assert "SUM over order_items after joining shipments double-counts" in warning
    assert "pre-aggregate order_items per orders first" in warning


def test_weak_guess_loses_to_declared_path() -> None:
    graph = SHOP.model_copy(deep=True)
    graph.tables.append(t("segments"))
    graph.edges.append(e("customers", "segments", "segment_id"))
    graph.edges.append(
        e("order_items", "segments", "segment_id", source="value_overlap", confidence=0.3)
    )
    path = connecting_tree(graph, ["order_items", "segments"])
    assert path.tables == ["order_items", "orders", "customers", "segments"]
    assert {x.source for x in path.edges} == {"foreign_key"}


# The demo's trap: customers and sales reps both belong to a region, and customers name
# their rep by a declared key that the data shows is not unique on the reps' side (N:M).
REPS = SchemaGraph(
    tables=[t(n) for n in ["customers", "sales_reps", "regions", "orders", "shipments"]],
    edges=[
        e("customers", "regions", "region_id"),
        e("sales_reps", "regions", "region_id"),
        e("customers", "sales_reps", "rep_id", card="many_to_many"),
        e("orders", "customers", "customer_id"),
        e("shipments", "orders", "order_id"),
        e("shipments", "regions", "region_id"),
    ],
)


@pytest.mark.parametrize(
    ("tables", "expected"),
    [
        # Through the region every customer would pair with every rep of it.
        (["customers", "sales_reps"], {("customers", "sales_reps")}),
        # Shipments belong to orders; meeting customers at their region is a chasm.
        (
            ["customers", "sales_reps", "orders", "shipments", "regions"],
            {("customers", "sales_reps"), ("orders", "customers"), ("shipments", "orders"),
             ("customers", "regions")},
        ),
    ],
)  # fmt: skip
def test_a_shared_parent_is_not_a_join_between_its_children(
    tables: list[str], expected: set[tuple[str, str]]
) -> None:
    path = connecting_tree(REPS, tables)
    edges = {(x.left, x.right) for x in path.edges}
    assert len(edges) == len(expected)
    # An asked-for region hangs off one table by one join (the first asked on a tie): no chasm.
    assert edges == expected
    assert sum("regions" in edge for edge in edges) <= 1


def test_a_shared_parent_is_used_when_nothing_else_joins() -> None:
    graph = SchemaGraph(tables=REPS.tables, edges=REPS.edges[:2])
    path = connecting_tree(graph, ["customers", "sales_reps"])
    assert path.tables == ["customers", "regions", "sales_reps"]
    assert any("both many per regions" in w for w in path.warnings)


def test_confident_inference_beats_a_longer_declared_path() -> None:
    graph = SHOP.model_copy(deep=True)
    graph.edges.append(
        e("order_items", "customers", "customer_id", source="inferred_name", confidence=0.99)
    )
    path = connecting_tree(graph, ["order_items", "customers"])
    assert path.tables == ["order_items", "customers"]


def test_steiner_tree_pulls_in_tables_the_question_never_names() -> None:
    path = connecting_tree(SHOP, ["customers", "regions", "order_items"])
    assert set(path.tables) == {"customers", "orders", "order_items", "shipments", "regions"}
    assert len(path.edges) == 4
    assert path.tables[0] == "customers"


def test_single_parent_chain_repeats_parents() -> None:
    grain, warnings = grain_and_warnings(
        ["order_items", "orders", "customers"],
        [
            PathEdge(
                left="order_items",
                right="orders",
                on=[("order_id", "id")],
                cardinality="many_to_one",
                source="foreign_key",
            ),
            PathEdge(
                left="orders",
                right="customers",
                on=[("customer_id", "id")],
                cardinality="many_to_one",
                source="foreign_key",
            ),
        ],
    )
    assert grain == "one row per order_items row"
    assert warnings and "rows of orders, customers repeat once per order_items row" in warnings[0]


def test_one_to_one_does_not_change_grain() -> None:
    grain, warnings = grain_and_warnings(
        ["users", "profiles"],
        [
            PathEdge(
                left="profiles",
                right="users",
                on=[("user_id", "id")],
                cardinality="one_to_one",
                source="foreign_key",
            )
        ],
    )
    assert grain in {"one row per users row", "one row per profiles row"}
    assert warnings == []


def _edge(left: str, right: str, cardinality: str) -> PathEdge:
    return PathEdge(left=left, right=right, on=[("order_id", "id")],
                    cardinality=cardinality, source="foreign_key")  # type: ignore[arg-type]  # fmt: skip


@pytest.mark.parametrize(
    ("tables", "edges", "grain", "repeated"),
    [
        # shipments is one row per order; order_lines is many per order: one grain, not two
        # tables "both many per orders" (was a fan-out warning on a correct pack).
        (
            ["shipments", "orders", "order_lines"],
            [("shipments", "orders", "one_to_one"), ("order_lines", "orders", "many_to_one")],
            "one row per order_lines row",
            "rows of shipments, orders repeat once per order_lines row",
        ),
        # A view one to one with customers, beside orders many per customer.
        (
            ["orders", "customers", "v_active_customers"],
            [("orders", "customers", "many_to_one"),
             ("v_active_customers", "customers", "one_to_one")],
            "one row per orders row",
            "rows of customers, v_active_customers repeat once per orders row",
        ),
    ],
)  # fmt: skip
def test_a_one_to_one_partner_shares_its_tables_grain(
    tables: list[str], edges: list[tuple[str, str, str]], grain: str, repeated: str
) -> None:
    found, warnings = grain_and_warnings(tables, [_edge(*x) for x in edges])
    assert found == grain
    assert len(warnings) == 1 and repeated in warnings[0], warnings
    assert "both many per" not in " ".join(warnings)


@pytest.mark.parametrize(
    "order",
    [
        ["orders", "shipments", "invoices", "order_items"],
        ["shipments", "invoices", "orders", "order_items"],
        ["order_items", "invoices", "shipments", "orders"],
    ],
)
def test_one_to_one_clusters_do_not_depend_on_the_tables_order(order: list[str]) -> None:
    edges = [_edge("shipments", "orders", "one_to_one"), _edge("invoices", "orders", "one_to_one"),
             _edge("order_items", "orders", "many_to_one")]  # fmt: skip
    grain, warnings = grain_and_warnings(order, edges)
    assert grain == "one row per order_items row"
    assert "both many per" not in " ".join(warnings)


def test_many_to_many_edge_is_flagged() -> None:
    _, warnings = grain_and_warnings(
        ["customers", "sales_reps"],
        [
            PathEdge(
                left="customers",
                right="sales_reps",
                on=[("rep_id", "rep_id")],
                cardinality="many_to_many",
                source="foreign_key",
            )
        ],
    )
    assert any("many-to-many" in w for w in warnings)


def test_unknown_table_suggests_close_names() -> None:
    with pytest.raises(TableNotFoundError) as info:
        shortest_join_path(SHOP, "order", "regions")
    assert "orders" in info.value.hint


def test_unconnected_tables_raise_with_hint() -> None:
    with pytest.raises(NoJoinPathError) as info:
        shortest_join_path(SHOP, "orders", "island")
    assert "island" in info.value.message
    assert info.value.hint


def test_render_lists_joins_grain_and_warnings() -> None:
    text = connecting_tree(SHOP, ["orders", "order_items", "shipments"]).render()
    assert "JOIN order_items.order_id = orders.id" in text
    assert "grain:" in text and "warning:" in text


def test_long_edge_notes_are_shortened_at_a_word() -> None:
    from rich.console import Console

    from schemawise.graph.model import Edge, Evidence, SchemaGraph, Table
    from schemawise.graph.render import graph_tables

    note = "declared key whose parent repeats in the data: " + "parentvalue " * 20
    graph = SchemaGraph(
        tables=[Table(name="a"), Table(name="b")],
        edges=[Edge(child_table="a", child_columns=["b_id"], parent_table="b",
                    parent_columns=["id"], cardinality="many_to_many", source="foreign_key",
                    confidence=1.0, evidence=Evidence(notes=[note]))],
    )  # fmt: skip
    console = Console(width=400, record=True)
    console.print(graph_tables(graph))
    text = console.export_text()
    assert "parentvalue …" in text and "parentval…" not in text


@pytest.mark.parametrize(
    ("inclusion", "expected"),
    [
        (None, None),  # not measured: nothing to say
        (1.0, None),
        (0.96, "4% of the values of flights.dest have no airports row"),
        (0.9955, "under 1% of the values of flights.dest have no airports row"),
        (0.0, "no value of flights.dest is found in airports: the join returns no rows"),
    ],
)
def test_a_join_with_orphans_warns_that_an_inner_join_drops_rows(
    inclusion: float | None, expected: str | None
) -> None:
    edge = PathEdge(
        left="flights",
        right="airports",
        on=[("dest", "faa")],
        cardinality="many_to_one",
        source="foreign_key",
        inclusion=inclusion,
    )
    _, warnings = grain_and_warnings(["flights", "airports"], [edge])
    orphans = [w for w in warnings if "airports row" in w or "no value" in w]
    if expected is None:
        assert orphans == []
    else:
        assert len(orphans) == 1 and orphans[0].startswith(expected)


@pytest.mark.parametrize(
    ("inclusion", "share"),
    [(0.96, "4%"), (0.9955, "under 1%"), (0.0005, "over 99%"), (0.5, "50%")],
)
def test_an_orphan_share_never_reads_as_none_or_all(inclusion: float, share: str) -> None:
    assert orphan_share(inclusion) == share


def test_a_composite_join_with_orphans_names_its_pairs() -> None:
    edge = PathEdge(
        left="batting",
        right="teams",
        on=[("year", "year"), ("team", "team")],
        cardinality="many_to_one",
        source="inferred_name",
        inclusion=0.91,
    )
    warning = orphan_warning(edge)
    assert warning is not None
    assert warning.startswith("9% of the (batting.year, batting.team) pairs have no teams row")
    assert warning.endswith("batting LEFT JOIN teams keeps them")
