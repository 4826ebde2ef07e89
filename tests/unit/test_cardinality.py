import pytest

from schemawise.graph import cardinality
from schemawise.graph.model import Column, Edge, SchemaGraph, Table


@pytest.mark.parametrize(
    ("parent_unique", "child_unique", "expected"),
    [
        (True, False, "many_to_one"),
        (True, None, "many_to_one"),
        (True, True, "one_to_one"),
        (False, True, "many_to_many"),
        (False, False, "many_to_many"),
        (None, None, "many_to_one"),
        (None, True, "many_to_one"),
    ],
)
def test_label(parent_unique: bool | None, child_unique: bool | None, expected: str) -> None:
    assert cardinality.label(parent_unique, child_unique) == expected


@pytest.mark.parametrize(
    ("declared", "measured", "expected"),
    [(True, None, True), (True, False, False), (False, True, True), (False, None, None)],
)
def test_data_overrides_declaration(
    declared: bool, measured: bool | None, expected: bool | None
) -> None:
    assert cardinality.combine(declared, measured) is expected


@pytest.mark.parametrize(
    ("declared", "measured", "expected"),
    [
        (True, True, "declared+measured"),
        (True, False, "declared"),
        (False, True, "measured"),
        (False, False, "assumed"),
    ],
)
def test_basis(declared: bool, measured: bool, expected: str) -> None:
    assert cardinality.basis(declared, measured) == expected


def _table(name: str, pk: list[str], *cols: str) -> Table:
    return Table(name=name, primary_key=pk, columns=[Column(name=c, type="int") for c in cols])


def test_assign_without_data_uses_declared_keys() -> None:
    graph = SchemaGraph(
        tables=[
            _table("orders", ["id"], "id"),
            _table("invoices", ["id"], "id", "order_id"),
            _table("order_notes", ["order_id"], "order_id"),
        ]
    )
    many = Edge(child_table="invoices", child_columns=["order_id"],
                parent_table="orders", parent_columns=["id"])  # fmt: skip
    one = Edge(child_table="order_notes", child_columns=["order_id"],
               parent_table="orders", parent_columns=["id"])  # fmt: skip
    cardinality.assign(many, graph, None)
    cardinality.assign(one, graph, None)
    assert many.cardinality == "many_to_one"
    assert one.cardinality == "one_to_one"
    assert one.evidence.cardinality_basis == "declared"
