"""The date dimension a time phrase needs (retrieve/dates.py)."""

from __future__ import annotations

import pytest

from schemawise.graph.model import Column, Edge, SchemaGraph, Table
from schemawise.retrieve.dates import date_dimensions, is_date_dimension


def _table(name: str, **columns: str) -> Table:
    return Table(name=name, columns=[Column(name=c, type=t) for c, t in columns.items()])


def _edge(child: str, column: str, parent: str, key: str) -> Edge:
    return Edge(
        child_table=child, child_columns=[column], parent_table=parent, parent_columns=[key],
        source="foreign_key", confidence=1.0,
    )  # fmt: skip


DATE_DIM = _table(
    "date_dim", d_date_sk="INTEGER", d_date="DATE", d_year="INTEGER", d_moy="INTEGER",
    d_day_name="TEXT", d_quarter_name="TEXT",
)  # fmt: skip
SALES = _table(
    "store_sales", ss_sold_date_sk="INTEGER", ss_item_sk="INTEGER", ss_store_sk="INTEGER",
    ss_net_paid="REAL",
)  # fmt: skip
# A store has dates of its own (opened, closed, the record's validity), enough to look like a
# calendar; the key into it says nothing of dates.
STORE = _table(
    "store", s_store_sk="INTEGER", s_rec_start_date="DATE", s_rec_end_date="DATE",
    s_closed_date_sk="INTEGER", s_store_name="TEXT", s_city="TEXT", s_state="TEXT",
    s_manager="TEXT", s_floor_space="INTEGER",
)  # fmt: skip
ITEM = _table("item", i_item_sk="INTEGER", i_rec_start_date="DATE", i_brand="TEXT")
STAR = SchemaGraph(
    tables=[DATE_DIM, SALES, ITEM, STORE],
    edges=[
        _edge("store_sales", "ss_sold_date_sk", "date_dim", "d_date_sk"),
        _edge("store_sales", "ss_item_sk", "item", "i_item_sk"),
        _edge("store_sales", "ss_store_sk", "store", "s_store_sk"),
    ],
)


@pytest.mark.parametrize(
    ("question", "picked", "expected"),
    [
        # Not the store, though it has three dates and the sales reference it.
        ("store sales in 2001", ["store_sales"], {"date_dim"}),
        ("sales per month by brand", ["store_sales", "item"], {"date_dim"}),
        # No time phrase: nothing to add.
        ("store sales by brand", ["store_sales", "item"], set()),
        # Already there.
        ("store sales in 2001", ["store_sales", "date_dim"], set()),
        # A table with dates of its own answers the time phrase itself.
        ("items introduced in 2001", ["item"], set()),
    ],
)
def test_a_time_phrase_brings_the_dates_the_facts_reference(
    question: str, picked: list[str], expected: set[str]
) -> None:
    found = date_dimensions(question, STAR, picked)
    assert set(found) == expected
    for reason in found.values():
        assert "store_sales.ss_sold_date_sk" in reason


def test_a_calendar_mostly_about_time_is_found_through_any_key() -> None:
    # `calendar_key` does not say "date"; the table it points at is mostly dates.
    calendar = _table("dim_calendar", calendar_key="INTEGER", full_date="DATE", year="INTEGER",
                      month="INTEGER", holiday="TEXT")  # fmt: skip
    facts = _table("fact_sales", calendar_key="INTEGER", amount="REAL")
    graph = SchemaGraph(
        tables=[calendar, facts],
        edges=[_edge("fact_sales", "calendar_key", "dim_calendar", "calendar_key")],
    )
    assert set(date_dimensions("total sales in 2001", graph, ["fact_sales"])) == {"dim_calendar"}


def test_a_table_with_one_date_is_no_calendar() -> None:
    assert is_date_dimension(DATE_DIM)
    assert not is_date_dimension(ITEM)
    # Time-named columns without a date-typed one: not a calendar either.
    assert not is_date_dimension(_table("t", year="INTEGER", month="INTEGER", day="INTEGER"))
