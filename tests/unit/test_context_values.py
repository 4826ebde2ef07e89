"""What a context pack shows beside its columns: values, key marks, counted reasons."""

from __future__ import annotations

import pytest

from schemawise.enrich.profile import ColumnProfile
from schemawise.graph.model import Column, SchemaGraph, Table
from schemawise.retrieve.pack import ColumnChoice, ContextPack, TableChoice
from schemawise.retrieve.render import render
from schemawise.retrieve.tables import counted
from schemawise.retrieve.values import VALUE_CHARS, names_value, render_values, shown_values

COUNTRIES = ColumnProfile(samples=["USA", "Canada", "France"], seen=["USA", "Canada", "Germany"])
STATUS = ColumnProfile(samples=["S", "A"], values=["A", "R", "S"])


@pytest.mark.parametrize(
    ("profile", "type_name", "question", "shown"),
    [
        # The value the question names comes first, even when it is not among the most common.
        (COUNTRIES, "varchar(40)", "Sales in Germany?", ["Germany", "USA", "Canada"]),
        # A wide text column the question names nothing of shows nothing: names, addresses.
        (COUNTRIES, "varchar(40)", "Sales by country?", []),
        # An enum-like column shows its codes, most common first.
        (STATUS, "text", "Shipped orders?", ["S", "A", "R"]),
        (
            ColumnProfile(samples=["2009-01-01 00:00:00"]),
            "datetime",
            "in 2009",
            ["2009-01-01 00:00:00"],
        ),
        # Numbers say little: not for numeric columns, nor numbers stored as text.
        (ColumnProfile(samples=["1", "2"], values=["1", "2"]), "integer", "type 1", []),
        (ColumnProfile(samples=["10", "2.5"], values=["10", "2.5"]), "text", "", []),
        (None, "text", "anything", []),
    ],
)
def test_shown_values(
    profile: ColumnProfile | None, type_name: str, question: str, shown: list[str]
) -> None:
    assert shown_values(profile, type_name, question) == shown


def test_long_values_are_cut() -> None:
    profile = ColumnProfile(samples=["x" * 100], values=["x" * 100])
    (value,) = shown_values(profile, "text", "")
    assert len(value) == VALUE_CHARS and value.endswith("…")


@pytest.mark.parametrize(
    ("question", "value", "named"),
    [
        ("orders from New York", "New York", True),
        ("orders from new york", "New York", True),
        ("orders from Newark", "New", False),  # whole words only
        ("uses C++ daily", "C++", True),  # a value ending in a symbol
        ("in 2010", "2010", False),  # bare numbers name too much to count
        ("a b", "a", False),  # one character
    ],
)
def test_names_value(question: str, value: str, named: bool) -> None:
    assert names_value(question, value) is named


def test_render_values_quotes_as_sql_does() -> None:
    assert render_values(["O'Brien", "Smith"]) == "e.g. 'O''Brien', 'Smith'"
    assert render_values([]) == ""


def test_reasons_are_counted_not_repeated() -> None:
    reasons = ["path document matched", "table card matched", "path document matched"]
    assert counted(reasons) == ["path document matched (2 times)", "table card matched"]


def test_rendering_marks_keys_and_shows_values() -> None:
    graph = SchemaGraph(
        name="shop",
        tables=[
            Table(
                name="orders",
                columns=[Column(name="id", type="integer"), Column(name="status", type="text")],
                primary_key=["id"],
            ),
            Table(
                name="order_tags",
                columns=[Column(name="order_id", type="integer"), Column(name="tag", type="text")],
                primary_key=["order_id", "tag"],
            ),
        ],
    )
    pack = ContextPack(
        question="shipped orders",
        tables=[TableChoice(name="orders", score=1.0), TableChoice(name="order_tags", score=0.5)],
        columns=[
            ColumnChoice(table="orders", name="id", tier=2),
            ColumnChoice(table="orders", name="status", tier=1, values=["S", "A"]),
            ColumnChoice(table="order_tags", name="order_id", tier=2),
            ColumnChoice(table="order_tags", name="tag", tier=2),
        ],
    )
    text = render(pack, graph)
    assert "  id integer PRIMARY KEY,\n  status text -- e.g. 'S', 'A'\n);" in text
    assert "  tag text,\n  PRIMARY KEY (order_id, tag)\n);" in text
