"""The relevance floor as a pure rule: the measures in, an empty pack's reason (or None) out."""

from __future__ import annotations

import pytest

from schemawise.retrieve.relevance import Relevance, RelevanceFloor, below_floor, measure

FLOOR = RelevanceFloor(similarity=0.6, similarity_with_words=0.4, words_found=1)


def test_the_measures_read_the_closest_document_and_the_words_held() -> None:
    measured = measure([0.7, None, 0.45, 0.9], {"track", "purchas", "never"}, {"track", "other"})
    assert measured == Relevance(similarity=0.55, words=3, words_found=1)
    assert measure([None], set(), set()) == Relevance(similarity=0.0, words=0, words_found=0)


@pytest.mark.parametrize(
    ("similarity", "found", "empty"),
    [
        (0.7, 0, False),  # close in meaning: relevant whatever the words
        (0.5, 1, False),  # closer than the lower bar, with a word the database holds
        (0.5, 0, True),  # neither close enough nor a word in common
        (0.3, 2, True),  # words in common, but nothing near in meaning
        (0.6, 0, False),  # the bar itself passes
    ],
)
def test_the_floor(similarity: float, found: int, empty: bool) -> None:
    reason = below_floor(Relevance(similarity=similarity, words=3, words_found=found), FLOOR)
    assert (reason is not None) == empty
    if reason:
        assert "nothing in the index is about this question" in reason


def test_no_floor_keeps_every_pack() -> None:
    assert below_floor(Relevance(similarity=0.0, words=2, words_found=0), None) is None
