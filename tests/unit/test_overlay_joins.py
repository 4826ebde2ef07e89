"""Joins the overlay states or denies: parsed from `table.column`, applied to the graph."""

from __future__ import annotations

import pytest

from schemawise.enrich.apply import apply_overlay_joins
from schemawise.enrich.metadata import Join, Metadata
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
    assert apply_overlay_joins(graph, meta) == (1, 1)
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
    assert apply_overlay_joins(graph, meta) == (0, 0)
    messages = [p.message for p in graph.problems]
    assert any("no column main.flights.tail_number" in m for m in messages)
    assert any("no table aircraft" in m for m in messages)
    assert all(p.stage == "overlay" and p.hint for p in graph.problems)
    assert len(graph.edges) == 2
