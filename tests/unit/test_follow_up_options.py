"""Which databases a follow-up asks: the one the turn it follows was answered from."""

from __future__ import annotations

import pytest

from schemawise.agent.assistant import AskOptions, follow_up_options
from schemawise.agent.prompts import PriorTurn


@pytest.mark.parametrize(
    ("sources", "answered_from", "asked"),
    [
        (None, "shop", ["shop"]),  # every database searched: the conversation's one
        (["shop", "music"], "music", ["music"]),  # several named: the conversation's one
        (["shop", "music"], "films", ["shop", "music"]),  # since narrowed (/source): as asked
        (None, None, None),  # a turn from before turns kept their database
    ],
)
def test_a_follow_up_asks_the_database_of_the_turn_it_follows(
    sources: list[str] | None, answered_from: str | None, asked: list[str] | None
) -> None:
    prior = PriorTurn("how many orders?", "SELECT count(*) FROM orders", source=answered_from)
    assert follow_up_options(AskOptions(sources=sources), prior).sources == asked
