"""A question's words in any script: letters with accents or of other alphabets stay whole, as
the index's own text search keeps them; the underscore still splits."""

from __future__ import annotations

import pytest

from schemawise.retrieve.words import content_words, question_words, text_words


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("customers in São Paulo", {"customer", "são", "paulo"}),
        ("invoices of Bjørn Hansen", {"invoice", "bjørn", "hansen"}),
        ("albums by Motörhead", {"album", "motörhead"}),
        ("ventes à Zürich", {"vente", "zürich"}),
        ("first_name of the Москва office", {"first", "москва", "office"}),
    ],
)
def test_words_with_letters_of_any_script_stay_whole(text: str, words: set[str]) -> None:
    assert question_words(text) == words
    assert words <= text_words(text)


def test_content_words_keep_accented_words_and_drop_numbers() -> None:
    assert content_words("how many orders in Köln since 2013") == ["orders", "köln", "since"]
