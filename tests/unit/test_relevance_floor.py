"""The relevance floor as a pure rule: the measures in, an empty pack's reason (or None) out."""

from __future__ import annotations

import pytest

from schemawise.graph.model import Column, SchemaGraph, Table
from schemawise.retrieve.relevance import Relevance, RelevanceFloor, below_floor, measure

FLOOR = RelevanceFloor(similarity=0.3)


def test_the_measures_read_the_closest_document_and_the_words_held() -> None:
    measured = measure([0.7, None, 0.45, 0.9], {"track", "purchas", "never"}, {"track", "other"})
    assert measured == Relevance(similarity=0.55, words=3, words_found=1, found=["track"])
    assert measure([None], set(), set()) == Relevance(similarity=0.0, words=0, words_found=0)


def test_the_words_that_name_the_schema() -> None:
    graph = SchemaGraph(tables=[
        Table(name="Highschooler", columns=[Column(name="grade", type="int")]),
        Table(name="shop.order_items", comment="one line per product sold",
              columns=[Column(name="UnitPrice", type="numeric")]),
    ])  # fmt: skip
    named = measure([0.5], set(), set(), {"grade", "price", "sold", "highschooler", "weather"},
                    graph).named  # fmt: skip
    assert named == ["grade", "highschooler", "price", "sold"]


@pytest.mark.parametrize(
    ("similarity", "found", "named", "empty"),
    [
        (0.1, 0, ["track"], False),  # a word of the schema's names: about this database
        (0.5, 1, [], False),  # words in the data and close enough in meaning
        (0.9, 0, [], True),  # no word of the database at all: meaning alone is not enough
        (0.2, 2, [], True),  # words in the data, but far in meaning
        (0.3, 1, [], False),  # the bar itself passes
    ],
)
def test_the_floor(similarity: float, found: int, named: list[str], empty: bool) -> None:
    measured = Relevance(similarity=similarity, words=3, words_found=found, named=named)
    reason = below_floor(measured, FLOOR)
    assert (reason is not None) == empty
    if reason:
        assert reason.startswith("nothing in the index is about this question")


def test_no_floor_keeps_every_pack() -> None:
    assert below_floor(Relevance(similarity=0.0, words=2, words_found=0), None) is None


READING = RelevanceFloor(similarity=0.3, reading=0.3)


@pytest.mark.parametrize(
    ("nearest", "empty"),
    [
        ({"vocalists": ("singer", 0.5)}, False),  # a user's word for the schema's
        ({"weather": ("date", 0.12), "tomorrow": ("year", 0.29)}, True),  # nothing near enough
        ({"zzqx": ("zone", 0.3)}, False),  # the bar itself passes
        ({}, True),  # no word left to read
    ],
)
def test_a_word_that_reads_as_a_schema_word_keeps_the_pack(
    nearest: dict[str, tuple[str, float]], empty: bool
) -> None:
    measured = Relevance(similarity=0.1, words=2, words_found=0, nearest=nearest)
    assert (below_floor(measured, READING) is not None) == empty
    # Without a reading bar the words are not consulted: the sentence's measures decide.
    assert below_floor(measured, FLOOR) is not None


def test_an_empty_pack_names_the_nearest_schema_words_to_ask_with() -> None:
    nearest = {"clients": ("customer", 0.27), "zzqx": ("zone", 0.1)}
    measured = Relevance(similarity=0.1, words=2, words_found=0, nearest=nearest)
    reason = below_floor(measured, READING)
    assert reason is not None
    assert "clients → customer 0.270, zzqx → zone 0.100, under the bar of 0.3" in reason
