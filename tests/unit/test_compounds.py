"""Words run together in identifiers (index/compounds.py), split by the embedder's own
tokenizer vocabulary."""

from __future__ import annotations

import pytest

from schemawise.index.cards import words
from schemawise.index.compounds import parts
from schemawise.known_words import vocabulary


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("lineitem", ("line", "item")),
        ("shipdate", ("ship", "date")),
        ("extendedprice", ("extended", "price")),
        ("mediatype", ("media", "type")),
        ("UnitPrice", ("unit", "price")),
        # One word already, or too short to be two.
        ("customer", None),
        ("employee", None),
        ("orders", None),
        # The longest word prefix leaves no word (`trans` + `cript`) or too short a one
        # (`citizens` + `hip`): not split rather than split wrong.
        ("transcript", None),
        ("citizenship", None),
        ("highschooler", None),
    ],
)
def test_parts(word: str, expected: tuple[str, str] | None) -> None:
    assert vocabulary(), "wordllama's tokenizer vocabulary is a dependency"
    assert parts(word) == expected


def test_lexical_text_keeps_the_word_and_adds_its_parts() -> None:
    assert words("l_shipdate") == "l shipdate ship date"
    assert words("order_items") == "order items"
    assert words("custId") == "cust id"


def test_a_part_that_is_a_word_of_asking_is_left_out() -> None:
    # "list the bills of every client" is not about playlists.
    assert parts("playlist") == ("play", "list")
    assert words("PlaylistTrack") == "playlist play track"
    assert words("firstname") == "firstname first"
