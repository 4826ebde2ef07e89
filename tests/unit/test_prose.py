"""Free-text columns (enrich/profile.py `reads_as_prose`): their values are sentences, whose
words are not the database's vocabulary; names, titles, addresses and codes are."""

from __future__ import annotations

import pytest

from schemawise.enrich.metadata import Metadata
from schemawise.enrich.profile import ColumnProfile, reads_as_prose
from schemawise.graph.model import Column, SchemaGraph, Table
from schemawise.index.sources import sample_values, seen_values
from schemawise.retrieve.evidence import table_terms
from schemawise.retrieve.values import shown_values

COMMENTS = [
    "furiously regular requests. platelets af",
    "ly express platelets. deposits acc",
    "instructions. slyly unusual packages wake",
    "y final requests wake slyly quickly spec",
    "ar packages. regular excuses among the i",
    "blithely regular theodolites sleep slyly",
]
DESCRIPTIONS = [
    "Powers will not get influences. Electora",
    "Men will not say merely. Old, available",
    "In general basic characters welcome. Cle",
    "Enough high areas stop expectations. Ela",
    "Well similar decisions used to keep hard",
]

TITLES = ["For Those About To Rock We Salute You", "Balls to the Wall", "Restless and Wild",
          "Let There Be Rock", "Big Ones", "Jagged Little Pill"]  # fmt: skip
COMPOSERS = ["Angus Young, Malcolm Young, Brian Johnson", "F. Baltes, S. Kaufman",
             "Steven Tyler, Joe Perry", "Alanis Morissette", "J.C. Fogerty"]  # fmt: skip
ADDRESSES = ["6915 Oberbrunner Point Suite 491, Gleasonville", "2294 Grant Square Apt. 235",
             "0647 Hintz Village Apt. 024", "11120 Jasper Ave NW",
             "Av. Brigadeiro Faria Lima, 2170"]  # fmt: skip
PART_NAMES = ["goldenrod lavender spring chocolate lace", "blush thistle blue yellow saddle",
              "spring green yellow purple cornsilk", "cornflower chocolate smoke green pink",
              "forest brown coral puff cream"]  # fmt: skip

GENRES = ["action, adventure, comedy, drama", "crime, drama, thriller, mystery",
          "animation, family, fantasy, musical", "horror, mystery, thriller, sci-fi",
          "romance, comedy, drama, music"]  # fmt: skip


@pytest.mark.parametrize(
    ("values", "prose"),
    [
        (COMMENTS, True),
        (DESCRIPTIONS, True),
        # Titles and names are capitalised; addresses too, with numbers.
        (TITLES, False),
        (COMPOSERS, False),
        (ADDRESSES, False),
        # Lower-case words without punctuation between them: a generated name, not text.
        (PART_NAMES, False),
        # A list of words, not sentences: the words a question uses.
        (GENRES, False),
        # Short codes and words; too few values to tell.
        (["open", "closed", "pending", "on hold", "cancelled"], False),
        (COMMENTS[:4], False),
    ],
)
def test_reads_as_prose(values: list[str], prose: bool) -> None:
    assert reads_as_prose(values) is prose


def test_free_text_values_are_neither_shown_nor_indexed() -> None:
    meta = Metadata(
        profiles={
            "item.i_item_desc": ColumnProfile(samples=DESCRIPTIONS[:3], seen=DESCRIPTIONS),
            "item.i_category": ColumnProfile(values=["Books", "Music", "Shoes"]),
        }
    )
    assert set(sample_values(meta)) == {"item.i_category"}
    assert set(seen_values(meta)) == {"item.i_category"}


def test_free_text_gives_a_table_no_words_and_shows_no_values() -> None:
    """Asked of the database itself, an item's description is no evidence that a question's
    "yet" or "build" is about items, and the pack shows no sentence as a value's form."""
    graph = SchemaGraph(
        tables=[Table(name="item", columns=[Column(name="i_item_desc", type="TEXT"),
                                            Column(name="i_category", type="TEXT")])]
    )  # fmt: skip
    prose = ColumnProfile(samples=DESCRIPTIONS[:3], seen=DESCRIPTIONS)
    listed = ColumnProfile(values=["Books", "Music", "Shoes"])
    meta = Metadata(profiles={"item.i_item_desc": prose, "item.i_category": listed})
    assert prose.free_text and not listed.free_text
    asked = {"power", "influence", "electoral", "music"}
    assert table_terms(graph, meta, "item", asked, []) == {"music"}
    assert shown_values(prose, "TEXT", "Powers will not get influences") == []
    assert shown_values(listed, "TEXT", "music sales") == ["Music", "Books", "Shoes"]
