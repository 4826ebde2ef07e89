"""A conversation's next turn as a pure decision: its subject, what it is read with, and
whether it moves on to another database."""

from __future__ import annotations

import pytest

from schemawise.agent.conversation import Turn
from schemawise.agent.follow_up import follows_text, moves_on, subject, subject_source
from schemawise.retrieve.pack import ContextPack, SourceScore, TableChoice


def turn(number: int, question: str, follows: str = "", source: str | None = "music") -> Turn:
    return Turn(number, question, "write_query", "answered", "SELECT 1", [], 1, None, source,
                follows)  # fmt: skip


def test_the_subject_runs_back_to_the_turn_that_began_it() -> None:
    turns = [
        turn(1, "orders per month", source="shop"),
        turn(2, "tracks per genre"),  # moved on: read with nothing earlier
        turn(3, "only Rock", "tracks per genre"),
        turn(4, "just the top 5", "tracks per genre\nonly Rock"),
    ]
    assert [t.number for t in subject(turns)] == [2, 3, 4]
    assert subject([]) == []
    assert follows_text(subject(turns)) == "tracks per genre\nonly Rock\njust the top 5"


def test_a_long_subject_is_read_by_its_latest_questions() -> None:
    turns = [turn(1, "q1"), *[turn(n, f"q{n}", "earlier") for n in range(2, 7)]]
    assert follows_text(subject(turns)) == "q4\nq5\nq6"


def test_the_subjects_database_is_the_latest_that_answered() -> None:
    assert subject_source([turn(1, "a", source="shop"), turn(2, "b", "a", None)]) == "shop"
    assert subject_source([turn(1, "a", source=None)]) is None


def pack(source: str | None, runner_up: float = 0.5) -> ContextPack:
    tables = [TableChoice(name="t", score=1.0)] if source else []
    return ContextPack(question="q", source=source, tables=tables,
                       alternatives=[SourceScore(source="music", score=runner_up)])  # fmt: skip


@pytest.mark.parametrize(
    ("alone", "searched", "floor_applies", "moved"),
    [
        (pack("singers"), ["music", "singers"], True, True),  # about another database
        (pack("music"), ["music", "singers"], True, False),  # about the subject's own
        (pack(None), ["music", "singers"], True, False),  # about nothing: stays a follow-up
        (pack("singers", 0.95), ["music", "singers"], True, False),  # the subject's is close
        (pack("singers"), ["music", "singers"], False, False),  # unfloored: no evidence
        (pack("singers"), ["singers"], True, True),  # the subject's database is not asked now
    ],
)
def test_a_turn_moves_on_only_on_evidence(
    alone: ContextPack, searched: list[str], floor_applies: bool, moved: bool
) -> None:
    assert moves_on(alone, "music", searched, floor_applies) == moved
    assert not moves_on(alone, None, searched, floor_applies)  # nothing known to move from
