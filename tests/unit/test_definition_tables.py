"""Definitions bring their tables: a definition or jargon entry the question asks about puts
the tables its text names in the pack; one merely about a chosen table does not."""

from __future__ import annotations

import pytest

from schemawise.enrich.metadata import Definition, Metadata
from schemawise.graph.model import SchemaGraph, Table
from schemawise.retrieve.notes import definition_tables, tables_named
from schemawise.retrieve.words import question_words

GRAPH = SchemaGraph(
    tables=[
        Table(name=n)
        for n in ("shop.orders", "shop.refunds", "shop.order_items", "shop.regions", "crm.regions")
    ]
)
META = Metadata(
    definitions=[
        Definition(
            name="net revenue",
            text="SUM(shop.orders.amt) over orders with status IN ('A', 'S'), minus "
            "SUM(shop.refunds.amount_cents) of approved refunds",
        ),
        Definition(name="basket size", text="items per order: COUNT(order_items) / COUNT(orders)"),
    ],
    jargon={
        "churned": "no order in shop.orders for 180 days",
        "recognized revenue": "SUM(shop.order_items.price)",
    },
)


@pytest.mark.parametrize(
    ("text", "tables"),
    [
        ("SUM(shop.refunds.amount_cents)", ["shop.refunds"]),
        ("orders minus refunds", ["shop.orders", "shop.refunds"]),
        ("per regions", []),  # two tables are called regions: a bare name is not enough
        ("crm.regions", ["crm.regions"]),
        ("preorders and refundsx", []),  # whole names only
    ],
)
def test_the_tables_a_text_names(text: str, tables: list[str]) -> None:
    assert tables_named(GRAPH, text) == tables


@pytest.mark.parametrize(
    ("question", "brought"),
    [
        ("net revenue per region", {"shop.orders", "shop.refunds"}),
        ("average basket size last month", {"shop.orders", "shop.order_items"}),
        ("how many customers churned", {"shop.orders"}),
        ("how many orders shipped", set()),  # names no definition: brings nothing
        ("revenue per region", set()),  # part of a term is not the term
    ],
)
def test_a_definition_the_question_asks_about_brings_its_tables(
    question: str, brought: set[str]
) -> None:
    found = definition_tables(GRAPH, META, question_words(question))
    assert set(found) == brought
    assert all(reason.startswith("named by the definition of ") for reason in found.values())


def test_a_jargon_entry_that_brings_its_tables_is_shown_too() -> None:
    from schemawise.retrieve.notes import metadata_notes

    meta = Metadata(jargon={"NRR": "net revenue retention, from shop.refunds per customer cohort"})
    asked = question_words("revenue retention per customer cohort")  # not the term itself
    assert definition_tables(GRAPH, meta, asked) == {
        "shop.refunds": "named by the definition of NRR"
    }
    shown = metadata_notes(["shop.refunds"], [], meta, asked).definitions
    assert shown == ["NRR: net revenue retention, from shop.refunds per customer cohort"]
