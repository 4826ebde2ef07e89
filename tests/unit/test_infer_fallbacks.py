"""A column's less likely parents, kept for when the data rejects the best-named one."""

from schemawise.graph.infer import containment_candidates, name_candidates
from schemawise.graph.model import Column, SchemaGraph, Table


def table(name: str, pk: list[str], *columns: tuple[str, str]) -> Table:
    return Table(name=name, primary_key=pk, columns=[Column(name=c, type=t) for c, t in columns])


def test_best_named_parent_comes_with_fallbacks() -> None:
    graph = SchemaGraph(
        tables=[
            # Keyless: its ids are measured unique, and `Continent` is named after the table.
            table("continents", [], ("ContId", "integer"), ("Continent", "text")),
            table("countries", ["CountryId"], ("CountryId", "integer"), ("Continent", "integer")),
        ]
    )
    (candidate,) = [
        c
        for c in name_candidates(graph, {("continents", "ContId")})
        if c.edge.child_table == "countries"
    ]
    assert candidate.edge.parent_columns == ["Continent"]
    assert [(e.parent_table, e.parent_columns) for e in candidate.fallbacks] == [
        ("continents", ["ContId"])
    ]


def test_containment_candidates_any_name_own_table_too() -> None:
    graph = SchemaGraph(
        tables=[
            table(
                "staff",
                ["staff_id"],
                ("staff_id", "integer"),
                ("line_manager", "integer"),
                ("salary", "real"),
                ("hired", "date"),
            ),
            table("shops", ["shop_id"], ("shop_id", "integer"), ("name", "text")),
        ]
    )
    found = containment_candidates(graph, placed={("shops", "name")}, primaries={
        "staff": "staff_id", "shops": "shop_id"})  # fmt: skip
    assert found[("staff", "line_manager")] == [("staff", "staff_id"), ("shops", "shop_id")]
    # A key may reference another table's key (a subtype), not its own.
    assert found[("staff", "staff_id")] == [("shops", "shop_id")]
    # Dates and amounts are no keys; placed columns are not offered again.
    assert ("staff", "hired") not in found and ("shops", "name") not in found
