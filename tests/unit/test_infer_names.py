"""Naming rules: which parent a column points to, on small hand-made schemas."""

import pytest

from schemawise.graph.infer import (
    MAX_COMPOSITE_CHECKS,
    QueryLogEntry,
    composite_candidates,
    join_pairs,
    name_candidates,
    query_log_candidates,
)
from schemawise.graph.model import Column, Edge, SchemaGraph, Table


def table(
    name: str, pk: list[str] | None, *columns: str, types: dict[str, str] | None = None
) -> Table:
    types = types or {}
    return Table(
        name=name,
        primary_key=pk or [],
        columns=[Column(name=c, type=types.get(c, "integer")) for c in columns],
    )


CATALOG = [
    table("customers", ["id"], "id", "name"),
    table("countries", ["CountryId"], "CountryId", "CountryName"),
    table("addresses", ["address_id"], "address_id", "street"),
    table("tv_channel", ["id"], "id", "series_name"),
    table("airports", ["AirportCode"], "AirportCode", "City", types={"AirportCode": "text"}),
    table("products", ["product_id"], "product_id", "sku", types={"sku": "text"}),
    table("employee", ["Employee_ID"], "Employee_ID", "Name"),
]


def parent_of(child: Table, column: str) -> tuple[str, str] | None:
    graph = SchemaGraph(tables=[*CATALOG, child])
    for candidate in name_candidates(graph):
        edge = candidate.edge
        if edge.child_table == child.name and edge.child_columns == [column]:
            return edge.parent_table, edge.parent_columns[0]
    return None


@pytest.mark.parametrize(
    ("column", "parent"),
    [
        ("customer_id", ("customers", "id")),  # table + key
        ("billing_customer_id", ("customers", "id")),  # role + table + key
        ("cust_id", ("customers", "id")),  # abbreviation
        ("CountryId", ("countries", "CountryId")),  # same name, about the parent
        ("Country", ("countries", "CountryId")),  # the table's name alone, primary key
        ("permanent_address_id", ("addresses", "address_id")),  # role + entity key
        ("Channel", ("tv_channel", "id")),  # last word of a compound table name
        ("DestAirport", ("airports", "AirportCode")),
        ("Employee_ID", ("employee", "Employee_ID")),
        ("name", None),  # generic names never point anywhere
        ("id", None),
        ("amount", None),
        ("created_at", None),
    ],
)
def test_name_rules(column: str, parent: tuple[str, str] | None) -> None:
    child = table("facts", ["fact_id"], "fact_id", column)
    assert parent_of(child, column) == parent


@pytest.mark.parametrize(
    ("owners", "parent"),
    [
        # One table owns the name as its key, though the name is not about that table.
        (["People"], ("People", "playerID")),
        # Two owners: the name alone cannot choose.
        (["People", "Prospects"], None),
    ],
)
def test_a_key_name_one_table_owns_is_a_reference(
    owners: list[str], parent: tuple[str, str] | None
) -> None:
    text = {"playerID": "text"}
    catalog = [table(name, ["playerID"], "playerID", "nameLast", types=text) for name in owners]
    child = table("Batting", None, "playerID", "yearID", types=text)
    assert _parents(SchemaGraph(tables=[*catalog, child]), "Batting", "playerID") == (
        [parent] if parent else []
    )


def test_a_name_that_is_no_key_is_not_a_reference_for_one_table_owning_it() -> None:
    # `schema_migrations.version` is its table's key, but `version` does not say it is a key.
    catalog = [table("schema_migrations", ["version"], "version")]
    child = table("documents", ["doc_id"], "doc_id", "version")
    assert _parents(SchemaGraph(tables=[*catalog, child]), "documents", "version") == []


def _parents(graph: SchemaGraph, child: str, column: str) -> list[tuple[str, str]]:
    return [
        (c.edge.parent_table, c.edge.parent_columns[0])
        for c in name_candidates(graph)
        if c.edge.child_table == child and c.edge.child_columns == [column]
    ]


def test_text_column_cannot_point_at_date_key() -> None:
    child = table("events", None, "customer_id", types={"customer_id": "date"})
    assert parent_of(child, "customer_id") is None


def test_own_primary_key_is_not_a_reference_by_loose_rules() -> None:
    # hiring.Employee_ID is hiring's key and also names employee: one-to-one, kept.
    hiring = table("hiring", ["Employee_ID"], "Employee_ID")
    assert parent_of(hiring, "Employee_ID") == ("employee", "Employee_ID")
    # A table's own `country_id` key is not sent to countries by the table-name rule.
    regions = table("country_stats", ["country"], "country")
    assert parent_of(regions, "country") is None


def test_declared_edges_are_not_duplicated() -> None:
    child = table("orders", ["order_id"], "order_id", "customer_id")
    declared = Edge(child_table="orders", child_columns=["customer_id"],
                    parent_table="customers", parent_columns=["id"])  # fmt: skip
    graph = SchemaGraph(tables=[*CATALOG, child], edges=[declared])
    assert not [c for c in name_candidates(graph) if c.edge.child_columns == ["customer_id"]]


def test_query_log_pairs_resolve_aliases_and_direction() -> None:
    graph = SchemaGraph(
        tables=[
            table("shop.customers", ["customer_id"], "customer_id"),
            table("shop.notes", None, "cust_ref", "body"),
        ]
    )
    log = [
        QueryLogEntry(
            "SELECT n.body FROM shop.notes n JOIN shop.customers c ON c.customer_id = n.cust_ref"
        ),
        QueryLogEntry(
            "SELECT * FROM shop.customers c, shop.notes x WHERE x.cust_ref = c.customer_id"
        ),
        QueryLogEntry("this is not sql ((("),
    ]
    pairs = join_pairs(log, "postgres")
    assert pairs.parsed == 2
    assert pairs.failed == 1
    [candidate] = query_log_candidates(graph, pairs)
    edge = candidate.edge
    assert (edge.child_table, edge.child_columns) == ("shop.notes", ["cust_ref"])
    assert (edge.parent_table, edge.parent_columns) == ("shop.customers", ["customer_id"])
    assert edge.evidence.query_log_joins == 2
    assert edge.source == "query_log"


def _sets_catalog(*declared: tuple[str, str, str, str]) -> SchemaGraph:
    text = {"code": "text", "setCode": "text", "Id": "integer"}
    return SchemaGraph(
        tables=[
            table("sets", ["id"], "id", "code", "name", types=text),
            table("set_translations", ["id"], "id", "setCode", "language", types=text),
            table("cards", ["id"], "id", "setCode", "name", types=text),
            table("printings", ["Id"], "Id", "name", types=text),
            table("boosters", ["id"], "id", "setCode", types=text),
        ],
        edges=[
            Edge(child_table=c, child_columns=[cc], parent_table=p, parent_columns=[pc])
            for c, cc, p, pc in declared
        ],
    )


def test_a_column_named_like_a_declared_reference_references_the_same_key() -> None:
    graph = _sets_catalog(("set_translations", "setCode", "sets", "code"))
    found = {
        (c.edge.child_table, c.edge.child_columns[0]): (c.edge.parent_table, c.edge.evidence.rule)
        for c in name_candidates(graph)
    }
    assert found[("cards", "setCode")] == ("sets", "same_as_declared")


@pytest.mark.parametrize(
    "declared",
    [
        # The name references two different keys: it says nothing on its own.
        [("set_translations", "setCode", "sets", "code"), ("cards", "setCode", "sets", "name")],
        # A generic name (`Id`) declared as a reference elsewhere is no evidence for another
        # table's own key.
        [("set_translations", "id", "sets", "id")],
    ],
)
def test_no_sibling_reference_when_ambiguous_or_generic(
    declared: list[tuple[str, str, str, str]],
) -> None:
    graph = _sets_catalog(*declared)
    rules = {c.edge.evidence.rule for c in name_candidates(graph)}
    assert "same_as_declared" not in rules


def _composites(*tables: Table) -> set[tuple[str, tuple[str, ...]]]:
    return {
        (c.edge.child_table, tuple(c.edge.child_columns))
        for c in composite_candidates(SchemaGraph(tables=list(tables)))
    }


TEAMS = table("teams", ["year", "team_id"], "year", "team_id", "wins")


@pytest.mark.parametrize(
    ("column", "found"),
    [
        ("home_team_id", True),  # a role before the name
        ("team_id_winner", True),  # or after it
        ("team_id_count", False),  # a measure, not a role
        ("team_id_2", False),  # digits are no role
        ("team_ids", False),
    ],
)
def test_a_part_of_a_composite_key_named_for_a_role(column: str, found: bool) -> None:
    games = table("games", ["game_id"], "game_id", "year", column)
    assert (("games", ("year", column)) in _composites(TEAMS, games)) is found


def test_roles_never_crowd_out_the_tables_holding_a_key_by_name() -> None:
    holders = [table(f"stats{n}", None, "year", "team_id", "runs") for n in range(35)]
    roles = [table(f"games{n}", None, "year", "home_team_id", "away_team_id") for n in range(6)]
    found = _composites(TEAMS, *holders, *roles)
    assert {(h.name, ("year", "team_id")) for h in holders} <= found
    assert len(found) == MAX_COMPOSITE_CHECKS
