"""A kept table's join to itself is in the pack's join paths (retrieve/tables.py `connect`)."""

from __future__ import annotations

from schemawise.graph.model import Column, Edge, SchemaGraph, Table
from schemawise.retrieve.tables import connect


def table(name: str, *columns: str) -> Table:
    return Table(name=name, primary_key=[columns[0]],
                 columns=[Column(name=c, type="integer") for c in columns])  # fmt: skip


def edge(child: str, column: str, parent: str, parent_column: str) -> Edge:
    return Edge(child_table=child, child_columns=[column], parent_table=parent,
                parent_columns=[parent_column])  # fmt: skip


GRAPH = SchemaGraph(
    tables=[
        table("employees", "emp_id", "mgr_id", "dept_id"),
        table("departments", "dept_id", "name"),
        table("payroll", "pay_id", "amount"),
    ],
    edges=[
        edge("employees", "mgr_id", "employees", "emp_id"),
        edge("employees", "dept_id", "departments", "dept_id"),
    ],
)


def joins(paths: list[dict[str, object]]) -> list[tuple[str, str, str]]:
    return [(e["left"], e["right"], e["on"][0][0]) for p in paths for e in p["edges"]]  # type: ignore[attr-defined,index]


def test_one_table_alone_keeps_its_join_to_itself() -> None:
    tables, paths, _ = connect(GRAPH, ["employees"])
    assert tables == ["employees"]
    assert joins(paths) == [("employees", "employees", "mgr_id")]
    assert paths[0]["grain"] == "one row per employees row" and paths[0]["warnings"] == []


def test_a_self_join_is_added_to_the_tree_without_changing_its_grain() -> None:
    _, paths, _ = connect(GRAPH, ["employees", "departments"])
    assert len(paths) == 1
    assert ("employees", "employees", "mgr_id") in joins(paths)
    assert ("employees", "departments", "dept_id") in joins(paths)
    assert paths[0]["grain"] == "one row per employees row"


def test_a_table_outside_the_tree_does_not_make_a_second_grain() -> None:
    # payroll joins nothing: the self-join is the pack's only join, and no warning pairs the
    # two tables as "both many per" anything.
    _, paths, notes = connect(GRAPH, ["employees", "payroll"])
    assert joins(paths) == [("employees", "employees", "mgr_id")]
    assert all("both many" not in w for p in paths for w in p["warnings"])  # type: ignore[attr-defined]
    assert notes == {"payroll": ["no known join path to employees"]}


def test_without_a_self_reference_nothing_is_added() -> None:
    assert connect(GRAPH, ["departments"])[1] == []
