"""A schema's own naming conventions (graph/conventions.py): table prefixes on columns and
key words its keys use, read off the schema itself."""

from __future__ import annotations

import pytest

from schemawise.graph.conventions import (
    abbreviates,
    column_prefix,
    key_words,
    logical_names,
    renamed,
    restore,
)
from schemawise.graph.model import Column, Edge, SchemaGraph, Table


def table(name: str, *columns: str, key: list[str] | None = None, kind: str = "INTEGER") -> Table:
    return Table(
        name=name,
        columns=[Column(name=c, type=kind) for c in columns],
        primary_key=key if key is not None else [columns[0]],
    )


@pytest.mark.parametrize(
    ("prefix", "name", "expected"),
    [
        ("ss", "store_sales", True),
        ("l", "lineitem", True),
        ("ps", "partsupp", True),
        ("inv", "inventory", True),
        ("cd", "customer_demographics", True),
        ("sm", "ship_mode", True),
        ("stu", "students", True),
        # The table's own word names the column: `size_code` in `sizes`, `user_id` in `users`.
        ("size", "sizes", False),
        ("user", "users", False),
        ("web", "web_site", False),
        # Letters the name does not start with, or not in its order.
        ("x", "lineitem", False),
        ("ls", "store_sales", False),
        ("s1", "store_sales", False),
    ],
)
def test_a_prefix_abbreviates_its_table(prefix: str, name: str, expected: bool) -> None:
    assert abbreviates(prefix, name) is expected


def test_the_prefix_most_columns_carry() -> None:
    lineitem = table("lineitem", "l_orderkey", "l_partkey", "l_quantity", "l_comment")
    assert column_prefix(lineitem) == "l"
    # One column without it (a late addition) does not hide the convention: 4 of 5 carry it.
    assert column_prefix(table("lineitem", "l_orderkey", "l_a", "l_b", "l_c", "note")) == "l"
    # Three of five is no convention; nor is a word that does not abbreviate the table.
    assert column_prefix(table("lineitem", "l_orderkey", "l_a", "l_b", "x", "y")) is None
    assert column_prefix(table("orders", "order_id", "order_date", "order_total")) is None


def test_key_words_are_learned_only_from_several_keys() -> None:
    dims = [
        table("item", "i_item_sk", "i_item_id"),
        table("store", "s_store_sk", "s_name"),
        table("date_dim", "d_date_sk", "d_year"),
    ]
    prefixes = {t.name: column_prefix(t) for t in dims}
    assert key_words(SchemaGraph(tables=dims), prefixes) == ({"sk"}, set())
    # Two keys ending in `sk` are not yet a convention.
    assert key_words(SchemaGraph(tables=dims[:2]), prefixes) == (set(), set())
    glued = [
        table("orders", "o_orderkey", "o_total"),
        table("customer", "c_custkey", "c_name"),
        table("nation", "n_nationkey", "n_name"),
    ]
    prefixes = {t.name: column_prefix(t) for t in glued}
    assert key_words(SchemaGraph(tables=glued), prefixes) == (set(), {"key"})


def test_a_table_without_keys_lends_its_first_whole_number_column() -> None:
    dims = [
        table("item", "i_item_sk", "i_name", key=[]),
        table("store", "s_store_sk", "s_name", key=[]),
        table("reason", "r_reason_sk", "r_desc", key=[]),
    ]
    prefixes = {t.name: column_prefix(t) for t in dims}
    assert key_words(SchemaGraph(tables=dims), prefixes)[0] == {"sk"}
    texts = [table(t.name, *[c.name for c in t.columns], key=[], kind="TEXT") for t in dims]
    assert key_words(SchemaGraph(tables=texts), prefixes)[0] == set()


def test_logical_names_and_back() -> None:
    graph = SchemaGraph(
        tables=[
            table("item", "i_item_sk", "i_item_id", "i_brand"),
            table("store", "s_store_sk", "s_name"),
            table("date_dim", "d_date_sk", "d_year"),
            table(
                "store_sales",
                "ss_sold_date_sk",
                "ss_item_sk",
                "ss_store_sk",
                "ss_quantity",
                key=["ss_item_sk", "ss_sold_date_sk"],
            ),
        ]
    )
    names = logical_names(graph)
    assert names[("store_sales", "ss_sold_date_sk")] == "sold_date_key"
    assert names[("store_sales", "ss_item_sk")] == "item_key"
    # The surrogate key and the business id stay apart: `_sk` becomes `key`, `_id` stays.
    assert names[("item", "i_item_sk")] == "item_key"
    assert names[("item", "i_item_id")] == "item_id"
    view = renamed(graph, names)
    assert view.table("store_sales").primary_key == ["item_key", "sold_date_key"]  # type: ignore[union-attr]
    assert graph.table("store_sales").primary_key == ["ss_item_sk", "ss_sold_date_sk"]  # type: ignore[union-attr]
    assert restore(names)[("item", "item_key")] == "i_item_sk"


def test_a_schema_without_conventions_is_left_alone() -> None:
    graph = SchemaGraph(
        tables=[
            table("singer", "singer_id", "name"),
            table("concert", "concert_id", "concert_name", "stadium_id"),
        ]
    )
    assert logical_names(graph) == {}


def test_two_columns_reading_alike_keep_their_names() -> None:
    dims = [
        table("item", "i_item_sk", "i_item_key"),
        table("store", "s_store_sk", "s_name"),
        table("date_dim", "d_date_sk", "d_year"),
    ]
    names = logical_names(SchemaGraph(tables=dims))
    assert ("item", "i_item_sk") not in names and ("item", "i_item_key") not in names
    assert names[("store", "s_store_sk")] == "store_key"


def test_a_composite_key_many_tables_carry_is_a_convention_not_a_reference() -> None:
    from schemawise.graph.infer import composite_candidates

    def keyed(name: str) -> Table:
        return table(name, "region_code", "item_code", "qty", key=["region_code", "item_code"])

    pair = SchemaGraph(tables=[keyed("sales"), keyed("sale_returns")])
    assert {(c.edge.child_table, c.edge.parent_table) for c in composite_candidates(pair)} == {
        ("sales", "sale_returns"),
        ("sale_returns", "sales"),
    }
    assert all(c.needs_confirmation for c in composite_candidates(pair))
    many = SchemaGraph(tables=[keyed(f"t{i}") for i in range(6)])
    assert composite_candidates(many) == []
    # A generic part (`id`) names nothing.
    tenant = SchemaGraph(tables=[table(n, "tenant_code", "id", key=["tenant_code", "id"])
                                 for n in ("a", "b")])  # fmt: skip
    assert composite_candidates(tenant) == []


def test_a_column_glued_from_its_table_words_points_at_that_table() -> None:
    """`ss_cdemo_sk` and `ss_hdemo_sk` both end like the key `demo_sk` of two tables: the
    glued letters (`c` for customer, `h` for household) choose between them."""
    from schemawise.graph.infer import name_candidates

    graph = SchemaGraph(
        tables=[
            table("customer_demographics", "cd_demo_sk", "cd_gender"),
            table("household_demographics", "hd_demo_sk", "hd_buy_potential"),
            table("item", "i_item_sk", "i_brand"),
            table("store_sales", "ss_cdemo_sk", "ss_hdemo_sk", "ss_item_sk", key=[]),
        ]
    )
    names = logical_names(graph)
    real = restore(names)
    found = {
        (real.get((c.edge.child_table, c.edge.child_columns[0])), c.edge.parent_table)
        for c in name_candidates(renamed(graph, names))
        if c.edge.child_table == "store_sales"
    }
    assert found == {
        ("ss_cdemo_sk", "customer_demographics"),
        ("ss_hdemo_sk", "household_demographics"),
        ("ss_item_sk", "item"),
    }


def test_a_word_does_not_glue_onto_a_table_it_happens_to_spell() -> None:
    """`item_id` is about items, not i + tem of `invoice_template`; `plan_id` not p + lan of
    `page_language`: with a bare `id` key and a word of English, no abbreviation is read."""
    from schemawise.graph.infer import name_candidates

    graph = SchemaGraph(
        tables=[
            table("invoice_template", "id", "body"),
            table("page_language", "id", "code"),
            table("order_line", "id", "item_id", "plan_id"),
        ]
    )
    found = {(c.edge.child_columns[0], c.edge.evidence.rule) for c in name_candidates(graph)}
    assert not {column for column, _ in found} & {"item_id", "plan_id"}, found


def test_a_team_season_many_tables_hold_is_a_reference_to_it() -> None:
    """`(yearID, teamID)` is the key of Teams: a generic part (the year) beside a specific one.
    Thirteen tables of the Baseball Databank hold it beside keys of their own: references,
    however many, each left to the data to confirm."""
    from schemawise.graph.infer import composite_candidates

    teams = table("Teams", "yearID", "teamID", "W", key=["yearID", "teamID"])
    seasons = [
        table(f"Stats{i}", "playerID", "yearID", "teamID", "G", key=["playerID", "yearID"])
        for i in range(6)
    ]
    found = composite_candidates(SchemaGraph(tables=[teams, *seasons]))
    assert {(c.edge.child_table, c.edge.parent_table) for c in found} == {
        (f"Stats{i}", "Teams") for i in range(6)
    }
    assert all(c.needs_confirmation for c in found)
    # A key of generic words alone names nothing.
    dated = table("Rates", "year", "type", "rate", key=["year", "type"])
    holder = table("Loans", "loan_id", "year", "type")
    assert composite_candidates(SchemaGraph(tables=[dated, holder])) == []


def _edge(child: str, columns: list[str], parent: str) -> Edge:
    return Edge(child_table=child, child_columns=columns, parent_table=parent,
                parent_columns=columns, source="inferred_name", confidence=0.9)  # fmt: skip


def test_a_composite_reference_a_smaller_one_implies_is_dropped() -> None:
    """A batting line holds the team season `(yearID, teamID)` and the key of the table of
    player seasons on a team, `(yearID, teamID, playerID)`: once the data confirms both, the
    smaller says all; between tables keyed alike the shared key is the reference."""
    from schemawise.graph.infer import implied_composites

    teams = table("Teams", "yearID", "teamID", key=["yearID", "teamID"])
    season = ["yearID", "teamID", "playerID"]
    appearances = table("Appearances", *season, "G_all", key=season)
    salaries = table("Salaries", *season, "salary", key=season)
    batting = table("Batting", "playerID", "yearID", "stint", "teamID", "HR",
                    key=["playerID", "yearID", "stint"])  # fmt: skip
    graph = SchemaGraph(tables=[teams, appearances, salaries, batting])
    to_teams = _edge("Batting", ["yearID", "teamID"], "Teams")
    to_appearances = _edge("Batting", season, "Appearances")
    peers = _edge("Salaries", season, "Appearances")
    salaries_to_teams = _edge("Salaries", ["yearID", "teamID"], "Teams")
    edges = [to_teams, to_appearances, peers, salaries_to_teams]
    assert implied_composites(edges, graph) == [to_appearances]
    # A smaller key the data rejected (not among the confirmed edges) implies nothing.
    assert implied_composites([to_appearances], graph) == []


@pytest.mark.parametrize(
    ("tables", "expected"),
    [
        # Named after its table alone: the key.
        ([("concert", ["concert_id", "name"]), ("singer_in_concert", ["concert_id", "x"])],
         {("concert", "concert_id")}),
        # Tables only ending in the key's name, none named after it alone: all presume it,
        # and the name rules choose among them.
        ([("customers", ["cust_id", "name"]), ("vip_customers", ["cust_id", "tier"])],
         {("customers", "cust_id"), ("vip_customers", "cust_id")}),
        # A table's own id comes first, wherever it stands.
        ([("AwardsPlayers", ["playerID", "id"])], {("AwardsPlayers", "id")}),
        # One table presuming it alone: its key.
        ([("AwardsPlayers", ["playerID", "awardID"])], {("AwardsPlayers", "playerID")}),
        # A bare id is every table's own.
        ([("a", ["id", "x"]), ("b", ["id", "y"])], {("a", "id"), ("b", "id")}),
    ],
)  # fmt: skip
def test_a_presumed_key_belongs_to_one_table(
    tables: list[tuple[str, list[str]]], expected: set[tuple[str, str]]
) -> None:
    from schemawise.graph.extract import presumed_keys

    graph = SchemaGraph(tables=[table(name, *cols, key=[]) for name, cols in tables])
    assert presumed_keys(graph) == expected


def test_no_key_is_presumed_where_another_table_declares_it() -> None:
    from schemawise.graph.extract import presumed_keys

    people = table("People", "playerID", "nameLast", kind="TEXT")
    awards = table("AwardsPlayers", "playerID", "awardID", key=[], kind="TEXT")
    assert presumed_keys(SchemaGraph(tables=[people, awards])) == set()
