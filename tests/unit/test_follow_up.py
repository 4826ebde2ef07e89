"""A conversation's next turn as a pure decision: its subject, what it is read with, and
whether it moves on to another database."""

from __future__ import annotations

import pytest

from schemawise.agent.conversation import Turn
from schemawise.agent.follow_up import elsewhere, follows_text, subject, subject_source
from schemawise.retrieve.pack import ContextPack, SourceScore, TableChoice


def turn(number: int, question: str, follows: str = "", source: str | None = "music",
         intent: str = "write_query") -> Turn:  # fmt: skip
    return Turn(number, question, intent, "answered", "SELECT 1", [], 1, None, source, follows)


def test_the_subject_runs_back_to_the_turn_that_began_it() -> None:
    turns = [
        turn(1, "orders per month", source="shop"),
        turn(2, "tracks per genre"),  # moved on: read with nothing earlier
        turn(3, "only Rock", "tracks per genre"),
        turn(4, "just the top 5", "tracks per genre\nonly Rock"),
    ]
    assert [t.number for t in subject(turns)] == [2, 3, 4]
    assert subject([]) == []
    # A lookup or an explanation in between neither begins nor ends the subject.
    between = [*turns[:3], turn(4, "what does GenreId mean?", intent="explain_metadata"),
               turn(5, "just the top 5", "tracks per genre\nonly Rock")]  # fmt: skip
    assert [t.number for t in subject(between)] == [2, 3, 5]
    # A fix in between is part of the subject (its SQL is what the next turn builds on), and
    # a conversation that opened with a fix has it for subject.
    fixed = [*turns[:3], turn(4, "fix: SELECT sum(Totl) …", intent="fix_query"),
             turn(5, "now by month", "tracks per genre\nonly Rock")]  # fmt: skip
    assert [t.number for t in subject(fixed)] == [2, 3, 4, 5]
    opened = [turn(1, "fix: SELECT …", intent="fix_query"), turn(2, "only 2010", "fix: SELECT …")]
    assert [t.number for t in subject(opened)] == [1, 2]
    assert follows_text(subject(turns)) == "tracks per genre\nonly Rock\njust the top 5"


def test_a_long_subject_is_read_by_its_first_and_latest_questions() -> None:
    turns = [turn(1, "q1"), *[turn(n, f"q{n}", "earlier") for n in range(2, 7)]]
    assert follows_text(subject(turns)) == "q1\nq5\nq6"


def test_the_subjects_database_is_the_latest_that_answered() -> None:
    assert subject_source([turn(1, "a", source="shop"), turn(2, "b", "a", None)]) == "shop"
    assert subject_source([turn(1, "a", source=None)]) is None


def pack(source: str | None, runner_up: float = 0.5) -> ContextPack:
    tables = [TableChoice(name="t", score=1.0)] if source else []
    return ContextPack(question="q", source=source, tables=tables,
                       alternatives=[SourceScore(source="music", score=runner_up)])  # fmt: skip


@pytest.mark.parametrize(
    ("alone", "floor_applies", "other"),
    [
        (pack("singers"), True, "singers"),  # on its own, about another database
        (pack("music"), True, None),  # about the subject's own
        (pack(None), True, None),  # about nothing: no other database to name
        (pack("singers", 0.95), True, None),  # the subject's is a close call
        (pack("singers"), False, None),  # unfloored: no evidence
    ],
)
def test_a_follow_up_clearly_about_another_database_names_it(
    alone: ContextPack, floor_applies: bool, other: str | None
) -> None:
    assert elsewhere(alone, "music", floor_applies) == other
