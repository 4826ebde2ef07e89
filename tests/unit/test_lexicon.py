"""The schema's own lexicon (retrieve/lexicon.py): unknown question words read as the nearest
schema word, with a toy embedder whose vectors say which words are alike."""

from __future__ import annotations

import numpy as np
import pytest

from schemawise.graph.model import Column, SchemaGraph, Table
from schemawise.retrieve.context import lexicon_on
from schemawise.retrieve.lexicon import (
    Readings,
    nearest_schema_words,
    schema_readings,
    schema_words,
    table_words,
    unknown_words,
    words_reading_as_names,
)
from schemawise.retrieve.relevance import DEFAULT_FLOOR
from schemawise.retrieve.settings import ContextSettings
from tests.toy_embedder import AxisEmbedder

# Each word's vector: words on one axis are alike; a word not listed is far from all.
AXES = {
    "singer": 0, "vocalist": 0, "vocalists": 0,
    "stadium": 1, "arena": 1, "arenas": 1,
    "capacity": 2, "seats": 2,
    "concert": 3, "name": 4, "year": 5, "song": 6,
}  # fmt: skip


class ToyEmbedder(AxisEmbedder):
    """AXES' words alike by axis, with a little shared meaning; any other word far."""

    def __init__(self) -> None:
        super().__init__(AXES, dim=8, shared=0.2)


def graph(*tables: tuple[str, list[str]]) -> SchemaGraph:
    return SchemaGraph(
        tables=[
            Table(name=name, columns=[Column(name=c, type="text") for c in columns])
            for name, columns in tables
        ]
    )


CONCERTS = graph(
    ("singer", ["Singer_ID", "Name", "Song_Name"]),
    ("stadium", ["Stadium_ID", "Capacity"]),
    ("concert", ["concert_ID", "Year"]),
)


def test_the_lexicon_is_the_words_tables_and_columns_are_named_with() -> None:
    assert schema_words(CONCERTS) == [
        "capacity",
        "concert",
        "name",
        "singer",
        "song",
        "stadium",
        "year",
    ]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("How many vocalists are there?", {"vocalists": "singer"}),
        ("arenas with the most seats", {"arenas": "stadium", "seats": "capacity"}),
        # Words the schema has (in any number) are not read; unlike words are left alone.
        ("How many singers per stadium?", {}),
        ("zzqx blorf", {}),
    ],
)
def test_unknown_words_read_as_the_nearest_schema_word(
    question: str, expected: dict[str, str]
) -> None:
    words = unknown_words(question)
    assert schema_readings(words, {"c": CONCERTS}, ToyEmbedder(), threshold=0.5).words == expected


def test_the_threshold_keeps_weak_readings_out() -> None:
    # The toy vectors of alike words are 1.0 similar and unlike ones 0.2 / 1.02: below 0.1
    # every unknown word reads as something, above 0.99 only the alike ones.
    words = unknown_words("vocalists at weather")
    assert set(schema_readings(words, {"c": CONCERTS}, ToyEmbedder(), 0.1).words) == {
        "vocalists", "weather"
    }  # fmt: skip
    assert schema_readings(words, {"c": CONCERTS}, ToyEmbedder(), 0.99).words == {
        "vocalists": "singer"
    }


def test_the_nearest_over_several_schemas_wins_and_each_is_embedded_once() -> None:
    concerts, other = CONCERTS.model_copy(deep=True), graph(("venue", ["arena_name"]))
    embedder = ToyEmbedder()
    both = {"concerts": concerts, "other": other}
    readings = schema_readings(unknown_words("vocalists"), both, embedder, 0.5)
    assert readings.words == {"vocalists": "singer"}
    # A word another schema holds is not unknown: "arena" is the venue table's own word.
    assert schema_readings(unknown_words("arena"), both, embedder, 0.5) == Readings()
    lexicon_calls = [c for c in embedder.calls if "singer" in c or "venue" in c]
    assert len(lexicon_calls) == 2  # each graph's lexicon once, then kept with the graph


def test_each_schema_is_scored_by_how_near_its_lexicon_comes_beyond_the_average() -> None:
    # "vocalists" is near the concerts schema's "singer" only; "weather" is as far from both
    # (0.2 similar to each), so it counts for neither.
    both = {"concerts": CONCERTS, "songs": graph(("song", ["year"]))}
    readings = schema_readings(unknown_words("vocalists weather"), both, ToyEmbedder(), 0.1)
    assert readings.near["songs"] == 0.0
    assert readings.near["concerts"] > 0.0


def test_no_unknown_words_score_no_schema() -> None:
    readings = schema_readings(unknown_words("singers"), {"c": CONCERTS}, ToyEmbedder(), 0.1)
    assert readings.near == {}


def test_the_floor_reads_each_unheld_word_against_one_schema() -> None:
    readings = nearest_schema_words(
        ["vocalists", "zzqx", "singers", "year"], CONCERTS.model_copy(deep=True), ToyEmbedder()
    )
    nearest = readings.nearest
    # A word the schema is named with (in any number) is not read; every other word is, with
    # its similarity, however far: the floor decides what is near enough.
    assert set(nearest) == {"vocalists", "zzqx"}
    assert nearest["vocalists"] == ("singer", 1.0)
    assert nearest["zzqx"][1] < 0.5
    # Each is also read against the words of the tables' names alone.
    assert set(readings.tables) == {"vocalists", "zzqx"}
    assert readings.tables["vocalists"] == ("singer", 1.0)
    assert {word for word, _ in readings.tables.values()} <= table_words(CONCERTS)


def test_the_floor_reads_words_without_measuring_chance() -> None:
    # The chance sample (some 500 words) is the vote's; the floor's readings need only the
    # lexicon and the question's words embedded.
    embedder = ToyEmbedder()
    nearest_schema_words(["vocalists"], CONCERTS.model_copy(deep=True), embedder)
    assert len(embedder.calls) == 2
    assert embedder.calls[1] == ["vocalists"]


def test_a_large_lexicon_does_not_win_the_vote_by_its_size() -> None:
    # "vocalists" is as near to the small schema's "singer" as to the large one's, but the
    # large lexicon also comes near ordinary words by chance (its "name"-axis word sits where
    # the chance sample does), so the same similarity is less telling there.
    chance_sample = ChanceEmbedder()
    small = graph(("singer", ["Singer_ID"]))
    large = graph(("singer", ["Name"]), ("stadium", ["Capacity", "Year"]), ("song", ["Year"]))
    readings = schema_readings(
        unknown_words("vocalists"), {"small": small, "large": large}, chance_sample, 0.1
    )
    assert readings.near["small"] > readings.near["large"]


class ChanceEmbedder(ToyEmbedder):
    """The toy vectors, and ordinary words (any the toy does not list) half-way near `name`:
    a lexicon holding `name` is near them by chance."""

    name = "toy-chance"

    def embed(self, texts: list[str]) -> np.ndarray:
        out = super().embed(texts)
        for i, text in enumerate(texts):
            if text not in AXES:
                out[i, 4] = 1.0
        return out


@pytest.mark.parametrize(
    ("setting", "searched", "embedder", "expected"),
    [
        (None, 1, DEFAULT_FLOOR.embedder, False),
        (None, 2, DEFAULT_FLOOR.embedder, True),
        (None, 2, "text-embedding-3-small", False),  # not measured with it: off unless asked
        (True, 1, "text-embedding-3-small", True),
        (False, 5, DEFAULT_FLOOR.embedder, False),
    ],
)
def test_the_lexicon_reads_by_default_only_where_there_is_a_database_to_choose(
    setting: bool | None, searched: int, embedder: str, expected: bool
) -> None:
    assert lexicon_on(ContextSettings(lexicon=setting), searched, embedder) is expected


@pytest.mark.parametrize(
    ("word", "read"),
    [("vocalists", True), ("aerodromes", True), ("zzqx", False), ("qwertyuiop", False)],
)
def test_only_words_of_english_are_read(word: str, read: bool) -> None:
    assert (word in unknown_words(f"how many {word}")) is read


def test_the_lexicon_holds_words_not_glued_codes_and_splits_compounds() -> None:
    warehouse = graph(("lineitem", ["l_shipmode", "l_availqty"]), ("household", ["hdemo_sk"]))
    words = schema_words(warehouse)
    assert {"line", "item", "ship", "mode", "household"} <= set(words)
    assert not {"availqty", "hdemo", "lineitem", "shipmode"} & set(words)


def test_the_chance_sample_is_embedded_once_per_embedder() -> None:
    embedder = ToyEmbedder()
    embedder.name = "toy-once"
    for copy in (CONCERTS.model_copy(deep=True), graph(("song", ["year"]))):
        schema_readings(unknown_words("vocalists"), {"c": copy}, embedder, 0.1)
    sample_calls = [c for c in embedder.calls if len(c) > 100]
    assert len(sample_calls) == 1


def test_a_plural_stays_when_its_singular_is_no_word_and_a_word_is_not_split() -> None:
    # The singular rule makes `movies` `movy`; `deadline` is a word, not dead + line.
    words = schema_words(graph(("movies", ["title", "deadline", "species"])))
    assert {"movies", "species", "deadline", "title"} <= set(words)
    assert not {"movy", "specy", "dead", "line"} & set(words)


@pytest.mark.parametrize(
    ("words", "tables", "read"),
    [
        # A word near a word of the table's own name reads as it.
        (["vocalists"], ["singer"], {"singer": {"vocalists": "singer"}}),
        # Near a word of a column's name only ("seats" → capacity): not the table's name.
        (["seats"], ["stadium"], {}),
        # Only the tables asked about are read; a word the lexicon holds is no unfound word.
        (["vocalists", "arenas"], ["stadium"], {"stadium": {"arenas": "stadium"}}),
        (["singer"], ["singer"], {}),
        # Far from every name: nothing.
        (["zeppelin"], ["singer", "stadium", "concert"], {}),
    ],
)
def test_words_read_as_a_table_s_name(
    words: list[str], tables: list[str], read: dict[str, dict[str, str]]
) -> None:
    assert words_reading_as_names(words, tables, CONCERTS, ToyEmbedder(), 0.55) == read


def test_the_bar_decides_what_reads_as_a_name() -> None:
    # Toy vectors: a word of no axis shares only the common direction, 0.2 / √1.04 ≈ 0.196.
    far = words_reading_as_names(["zeppelin"], ["singer"], CONCERTS, ToyEmbedder(), 0.19)
    assert far == {"singer": {"zeppelin": "singer"}}
    assert words_reading_as_names(["zeppelin"], ["singer"], CONCERTS, ToyEmbedder(), 0.2) == {}
