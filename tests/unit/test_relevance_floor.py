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


# The word reader's bars (all-MiniLM-L6-v2): a word near a table's name keeps the pack at a lower
# bar than one near a column's word only (hour → time, today → day: an off-topic question's
# generic words).
READER = RelevanceFloor(similarity=0.3, reading=0.3, table_reading=0.55, column_reading=0.65)


@pytest.mark.parametrize(
    ("nearest", "tables", "empty"),
    [
        ({"aerodromes": ("airport", 0.64)}, {"aerodromes": ("airport", 0.64)}, False),
        ({"hour": ("time", 0.62)}, {"hour": ("flight", 0.2)}, True),  # a column's word, under
        ({"kilometres": ("distance", 0.73)}, {"kilometres": ("flight", 0.3)}, False),
        ({"maestros": ("orchestra", 0.44)}, {"maestros": ("orchestra", 0.44)}, True),
        ({"clients": ("customer", 0.55)}, {"clients": ("customer", 0.55)}, False),  # the bar
    ],
)
def test_with_the_word_reader_a_table_word_is_read_at_a_lower_bar(
    nearest: dict[str, tuple[str, float]], tables: dict[str, tuple[str, float]], empty: bool
) -> None:
    measured = Relevance(
        similarity=0.1, words=2, words_found=0, nearest=nearest, nearest_tables=tables,
        reader="all-minilm-l6-v2-int8",
    )  # fmt: skip
    assert (below_floor(measured, READER) is not None) == empty
    # Read by another model, the same similarities are judged by `reading` alone: its scale.
    other = measured.model_copy(update={"reader": "wordllama-l2-256"})
    assert below_floor(other, READER) is None


@pytest.mark.parametrize(
    ("word", "column", "table", "said"),
    [
        ("hour", ("time", 0.62), ("flight", 0.2), "hour → time 0.620, under the bar of 0.65"),
        ("pupil", ("name", 0.5), ("student", 0.52),
         "nearest table word: pupil → student 0.520, under 0.55"),
    ],
)  # fmt: skip
def test_the_hint_gives_the_bars_of_the_model_that_read(
    word: str, column: tuple[str, float], table: tuple[str, float], said: str
) -> None:
    measured = Relevance(
        similarity=0.1, words=2, words_found=0, nearest={word: column},
        nearest_tables={word: table}, reader="all-minilm-l6-v2",
    )  # fmt: skip
    reason = below_floor(measured, READER)
    assert reason is not None and said in reason


def test_without_a_reading_bar_no_reading_keeps_a_pack_whoever_read() -> None:
    # `reading=None` turns word readings off, whichever model read them.
    measured = Relevance(
        similarity=0.1, words=2, words_found=0, nearest={"aerodromes": ("airport", 0.64)},
        nearest_tables={"aerodromes": ("airport", 0.64)}, reader="all-minilm-l6-v2-int8",
    )  # fmt: skip
    assert below_floor(measured, READER) is None
    assert below_floor(measured, RelevanceFloor(similarity=0.3)) is not None


# By the word reader, a question that names nothing must also read, as a sentence, near one of
# the tables it found best: shared words alone ("lake" as a value) do not make it about them.
CARDS = RelevanceFloor(similarity=0.3, reading=0.3, card_reading=0.2)


@pytest.mark.parametrize(
    ("named", "card_similarity", "reader", "empty"),
    [
        # Words in the data, close in meaning, a word read as a table's: all kept it before.
        ([], 0.12, "all-minilm-l6-v2-int8", True),
        ([], 0.2, "all-minilm-l6-v2-int8", False),  # the bar itself passes
        ([], 0.45, "all-minilm-l6-v2", False),
        (["lake"], 0.01, "all-minilm-l6-v2-int8", False),  # naming the schema still keeps it
        ([], None, "all-minilm-l6-v2-int8", False),  # not measured: the other measures decide
        ([], 0.12, "wordllama-l2-256", False),  # another model's scale: not judged by the bar
    ],
)
def test_a_question_naming_nothing_must_read_near_a_table(
    named: list[str], card_similarity: float | None, reader: str, empty: bool
) -> None:
    measured = Relevance(
        similarity=0.5, words=5, words_found=2, named=named,
        nearest={"lake": ("lake", 0.9)}, nearest_tables={"lake": ("lake", 0.9)},
        reader=reader, card_similarity=card_similarity,
    )  # fmt: skip
    reason = below_floor(measured, CARDS)
    assert (reason is not None) is empty
    if reason:
        assert "0.12 similar at most to the tables that matched it best, under 0.2" in reason
    # Without a reading bar, no reading of any kind decides.
    unread = RelevanceFloor(similarity=0.3, reading=None, card_reading=0.2)
    assert below_floor(measured, unread) is None


def test_a_name_the_data_holds_keeps_a_question_from_the_card_bar() -> None:
    measured = Relevance(
        similarity=0.47, words=2, words_found=2, found=["live", "pari"], reader=CARDS.readers[0],
        card_similarity=0.12, names_found=["Paris"],
    )  # fmt: skip
    assert below_floor(measured, CARDS) is None
    assert below_floor(measured.model_copy(update={"names_found": []}), CARDS) is not None
