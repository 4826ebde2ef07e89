"""Joins the overlay states or denies: parsed from `table.column`, applied to the graph."""

from __future__ import annotations

import pytest

from schemawise.enrich.apply import apply_overlay_joins
from schemawise.enrich.metadata import Join, Metadata
from schemawise.graph.extract import add_bridges
from schemawise.graph.model import Column, Edge, SchemaGraph, Table


@pytest.mark.parametrize(
    ("entry", "child", "parent"),
    [
        (
            {"from": "flights.tailnum", "to": "planes.tailnum"},
            ("flights", ["tailnum"]),
            ("planes", ["tailnum"]),
        ),
        (
            {"from": ["SeriesPost.yearID", "SeriesPost.teamIDwinner"],
             "to": ["Teams.yearID", "Teams.teamID"]},
            ("SeriesPost", ["yearID", "teamIDwinner"]),
            ("Teams", ["yearID", "teamID"]),
        ),
        (
            {"from": "shop.orders.customer_id", "to": "shop.customers.customer_id"},
            ("shop.orders", ["customer_id"]),
            ("shop.customers", ["customer_id"]),
        ),
    ],
)  # fmt: skip
def test_a_join_is_written_as_table_and_column(
    entry: dict[str, object], child: tuple[str, list[str]], parent: tuple[str, list[str]]
) -> None:
    join = Join.parse(entry)
    assert (join.child_table, join.child_columns) == child
    assert (join.parent_table, join.parent_columns) == parent


@pytest.mark.parametrize(
    "entry",
    [
        {"from": "flights.tailnum"},  # no `to`
        {"from": "tailnum", "to": "planes.tailnum"},  # no table
        {"from": ["a.x", "a.y"], "to": "b.x"},  # lengths differ
        {"from": ["a.x", "c.y"], "to": ["b.x", "b.y"]},  # two tables on one side
        "flights.tailnum -> planes.tailnum",
        {"from": 1.5, "to": "b.x"},  # a number read as table 1, column 5
        {"from": "a.", "to": "b.x"},  # no column
        {"from": ["a.x", "a.x"], "to": ["b.x", "b.y"]},  # a column twice
    ],
)
def test_a_join_written_otherwise_is_refused(entry: object) -> None:
    with pytest.raises(TypeError):
        Join.parse(entry)


def _graph() -> SchemaGraph:
    def table(name: str, *columns: str) -> Table:
        return Table(name=name, primary_key=[columns[0]],
                     columns=[Column(name=c, type="text") for c in columns])  # fmt: skip

    return SchemaGraph(
        tables=[
            table("main.planes", "tailnum", "model"),
            table("main.flights", "flight_id", "tailnum", "half"),
            table("main.halves", "half", "label"),
        ],
        edges=[
            Edge(child_table="main.flights", child_columns=["half"], parent_table="main.halves",
                 parent_columns=["half"], source="inferred_name", confidence=0.8),
            Edge(child_table="main.flights", child_columns=["tailnum"],
                 parent_table="main.planes", parent_columns=["tailnum"],
                 source="value_overlap", confidence=0.7),
        ],
    )  # fmt: skip


def _meta(joins: list[dict[str, object]], not_joins: list[dict[str, object]]) -> Metadata:
    return Metadata(
        joins=[Join.parse(j) for j in joins], not_joins=[Join.parse(j) for j in not_joins]
    )


def test_the_overlay_states_a_join_and_denies_another() -> None:
    graph = _graph()
    meta = _meta(
        [{"from": "flights.tailnum", "to": "planes.tailnum"}],  # bare names resolve
        [{"from": "halves.half", "to": "flights.half"}],  # either way round
    )
    done = apply_overlay_joins(graph, meta)
    assert (done.added, done.removed, done.problems) == (1, 1, [])
    joins = {(e.child_table, tuple(e.child_columns), e.parent_table): e.source for e in graph.edges}
    # The overlay's word replaces what inference found between the same columns.
    assert joins == {("main.flights", ("tailnum",), "main.planes"): "overlay"}
    assert graph.problems == []


def test_a_join_naming_what_the_graph_lacks_is_said_and_left_out() -> None:
    graph = _graph()
    meta = _meta(
        [{"from": "flights.tail_number", "to": "planes.tailnum"},
         {"from": "flights.tailnum", "to": "aircraft.tailnum"}],
        [],
    )  # fmt: skip
    done = apply_overlay_joins(graph, meta)
    assert (done.added, done.removed) == (0, 0) and done.problems == graph.problems
    # Marked partial (docs/json.md: `partial` is true when `problems` is not empty).
    assert graph.partial
    messages = [p.message for p in graph.problems]
    assert any("no column main.flights.tail_number" in m for m in messages)
    assert any("no table aircraft" in m for m in messages)
    assert all(p.stage == "overlay" and p.hint for p in graph.problems)
    assert len(graph.edges) == 2


def _keyed() -> SchemaGraph:
    """lines (order_id, product_id) keyed by both, each a declared key: a bridge."""

    def table(name: str, key: list[str], *columns: str) -> Table:
        return Table(name=name, primary_key=key,
                     columns=[Column(name=c, type="integer") for c in columns])  # fmt: skip

    def declared(child: str, column: str, parent: str) -> Edge:
        return Edge(child_table=child, child_columns=[column], parent_table=parent,
                    parent_columns=[column], source="foreign_key")  # fmt: skip

    graph = SchemaGraph(
        tables=[table("orders", ["order_id"], "order_id", "placed"),
                table("products", ["product_id"], "product_id", "price"),
                table("tags", [], "product_id", "tag"),
                table("lines", ["order_id", "product_id"], "order_id", "product_id", "qty")],
        edges=[declared("lines", "order_id", "orders"),
               declared("lines", "product_id", "products")],
    )  # fmt: skip
    add_bridges(graph)
    return graph


def test_denying_a_declared_key_keeps_the_catalogues_fingerprint() -> None:
    # `check` and `run` reuse the indexed graph when the catalogue's fingerprint matches: a
    # denied declared key must not make the stored graph look stale.
    graph = _keyed()
    catalog = graph.structure_version()
    apply_overlay_joins(graph, _meta([], [{"from": "lines.order_id", "to": "orders.order_id"}]))
    assert graph.structure_version() == catalog
    assert all(e.key()[0] != "lines" or e.key()[2] != "orders" for e in graph.edges)


def test_bridges_are_derived_again_from_the_joins_left() -> None:
    graph = _keyed()
    assert [e.via for e in graph.edges if e.via] == ["lines"]
    apply_overlay_joins(graph, _meta([], [{"from": "lines.order_id", "to": "orders.order_id"}]))
    # The many-to-many through lines cited the denied join: it goes with it.
    assert [e.via for e in graph.edges if e.via] == []


def test_denying_a_join_the_graph_lacks_is_said() -> None:
    graph = _keyed()
    meta = _meta([], [{"from": "orders.order_id", "to": "products.product_id"},
                      {"from": "orders.placed", "to": "products.price"}])  # fmt: skip
    done = apply_overlay_joins(graph, meta)
    assert done.removed == 0
    messages = [p.message for p in done.problems]
    assert "many-to-many through lines: deny one of the joins to it" in messages[0]
    assert "the graph has no join between those columns" in messages[1]


def test_a_join_stated_twice_counts_once() -> None:
    graph = _graph()
    join = {"from": "flights.tailnum", "to": "planes.tailnum"}
    assert apply_overlay_joins(graph, _meta([join, join], [])).added == 1
    assert sum(e.source == "overlay" for e in graph.edges) == 1


def test_without_data_a_stated_joins_cardinality_is_marked_assumed() -> None:
    # Without data, nothing says tags.product_id is unique: the assumed label is kept, and with
    # a checker the data decides (tests/integration/test_metadata.py).
    graph = _keyed()
    apply_overlay_joins(graph, _meta([{"from": "lines.product_id", "to": "tags.product_id"}], []))
    (edge,) = [e for e in graph.edges if e.source == "overlay" and e.via is None]
    assert edge.evidence.cardinality_basis == "assumed"


def test_a_bare_name_two_schemas_share_is_said_to_be_ambiguous() -> None:
    graph = SchemaGraph(
        tables=[Table(name=f"{schema}.orders", columns=[Column(name="id", type="integer")])
                for schema in ("a", "b")] + [Table(name="a.lines", columns=[
                    Column(name="order_id", type="integer")])],
    )  # fmt: skip
    done = apply_overlay_joins(graph, _meta([{"from": "lines.order_id", "to": "orders.id"}], []))
    assert (
        "orders names 2 tables (a.orders, b.orders): write the schema" in done.problems[0].message
    )


def test_the_bridges_derived_again_are_extractions_not_dbts() -> None:
    # dbt's relationships come after extraction and make no bridge; an unrelated stated join
    # must not make one out of them either.
    graph = _keyed()
    for edge in graph.edges:
        if edge.via is None and edge.parent_table == "products":
            edge.source = "dbt_relationship"
    graph.edges = [e for e in graph.edges if e.via is None]  # as extraction left it
    done = apply_overlay_joins(
        graph, _meta([{"from": "tags.product_id", "to": "products.product_id"}], [])
    )
    assert done.added == 1
    assert [e for e in graph.edges if e.via] == []


def test_tables_and_columns_the_database_lacks_are_said_with_the_nearest_name() -> None:
    from schemawise.enrich.apply import unknown_names
    from schemawise.enrich.metadata import ColumnMeta, TableMeta

    meta = Metadata(
        tables={
            "plane": TableMeta(description="a typo of planes"),
            "main.flights": TableMeta(columns={"tailnumm": ColumnMeta(), "HALF": ColumnMeta()}),
            "halves": TableMeta(columns={"label": ColumnMeta()}),  # bare name, known column
        }
    )
    problems = unknown_names(_graph(), meta, "schemawise.yml")
    assert [(p.table, p.message.split(",")[0]) for p in problems] == [
        (None, "schemawise.yml describes table plane"),
        ("main.flights", "schemawise.yml describes column main.flights.tailnumm"),
    ]
    assert problems[0].hint.startswith("Did you mean planes?")
    assert problems[1].hint.startswith("Did you mean tailnum?")


def test_a_column_of_any_table_the_entry_describes_is_known() -> None:
    from schemawise.enrich.apply import unknown_names
    from schemawise.enrich.metadata import ColumnMeta, TableMeta

    graph = SchemaGraph(
        tables=[
            Table(name="sales.orders", columns=[Column(name="id", type="int")]),
            Table(name="archive.orders", columns=[Column(name="archived_at", type="date")]),
            *(Table(name=f"events_2024010{d}", columns=[Column(name="status", type="text")])
              for d in range(1, 4)),
        ]
    )  # fmt: skip
    meta = Metadata(
        tables={
            "orders": TableMeta(columns={"archived_at": ColumnMeta()}),  # two tables: one has it
            "events_*": TableMeta(columns={"status": ColumnMeta()}),  # a sharded family
            "events_2023*": TableMeta(),  # a pattern no table fits
        }
    )
    problems = unknown_names(graph, meta, "schemawise.yml")
    assert [p.message.split(",")[0] for p in problems] == [
        "schemawise.yml describes table events_2023*"
    ]
