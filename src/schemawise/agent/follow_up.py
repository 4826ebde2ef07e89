"""A conversation's next turn: a follow-up of its subject, or a new subject.

A follow-up ("now split it by month") rarely names what it is about, so it is read together
with the questions of its subject (retrieve/context.py, `follows`), on the database the subject
was answered from, and the writer sees the subject's earlier SQL. A subject is the turns that
wrote SQL (or tried to) from the one that began it: the first, or one that moved on. A turn of
another kind in between (which tables hold…, what does … mean) neither begins nor ends one, and
a turn the relevance floor emptied answers from no database, so it is no subject to follow.

A turn is a new subject only when the subject's database is no longer searched (removed from
the index, or another one named with `/source`). Whether a turn has left its subject cannot be
told from its own words: a follow-up's are few ("what's the median?", "in euros") or name a
column another database has too ("now by country" after Chinook, which car_1 also has), and a
full question about another database ("how many singers are from each country?") looks much the
same to the votes (docs/benchmarks.md, "Follow-up turns"). So it stays a follow-up, and the model
answers from the conversation ("zzqx blorf" too); but when, asked on its own of every database
searched, it is clearly about another one (the subject's not a close call), the reply says so and
how to ask that one (`elsewhere`). Pure: the turns and the packs in, the decision out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from schemawise.agent.conversation import Turn
from schemawise.retrieve.pack import ContextPack
from schemawise.retrieve.source_choice import close_calls

# The questions a follow-up is read with: the subject's first (what it is about) and its latest
# (what it has come to); the writer's prompt shows the last three turns too.
SUBJECT_QUESTIONS = 3


@dataclass(frozen=True)
class Subject:
    """What a turn of a conversation is read with: nothing (a first question, or a new one)."""

    turns: list[Turn] = field(default_factory=list)  # the subject's, oldest first
    follows: str = ""  # its questions, one per line: "" when the turn is not a follow-up
    source: str | None = None  # the database it was answered from
    notes: list[str] = field(default_factory=list)  # what to tell the user about it


def not_searched(source: str) -> Subject:
    """A new question: the subject's database is not searched now (removed, or not named)."""
    return Subject(notes=[f"Asked as a new question: the conversation was about {source}, "
                          f"which is not searched now."])  # fmt: skip


def subject(turns: Sequence[Turn]) -> list[Turn]:
    """The turns of the conversation's current subject, oldest first: back from the last turn
    that wrote or fixed SQL (or tried to) to the question that began it (read with nothing
    earlier); a conversation that opened with a fix has those turns for subject."""
    found: list[Turn] = []
    for turn in reversed(turns):
        if turn.intent == "fix_query":
            found.append(turn)  # its fixed SQL is part of the subject; it begins none
        elif turn.intent == "write_query":
            found.append(turn)
            if not turn.follows:
                break
        # a lookup or an explanation in between: not part of any subject
    return found[::-1]


def follows_text(turns: Sequence[Turn]) -> str:
    """The subject's questions a follow-up is read with, one per line: its first and latest."""
    questions = [t.question for t in turns]
    if len(questions) > SUBJECT_QUESTIONS:
        questions = [questions[0], *questions[-(SUBJECT_QUESTIONS - 1) :]]
    return "\n".join(questions)


def subject_source(turns: Sequence[Turn]) -> str | None:
    """The database the subject was last answered from (None: none was: its turns were emptied
    by the floor, or kept before turns recorded it)."""
    return next((t.source for t in reversed(turns) if t.source), None)


def elsewhere(alone: ContextPack, source: str, floor_applies: bool) -> str | None:
    """The database a follow-up is about instead of its subject's, when that is clear: asked on
    its own of every database searched (`alone`, under the floor) it chose another, and the
    subject's is not a close call beside it. None otherwise, and under an embedder the floor was
    not measured for (an unfloored pack is no evidence)."""
    if not floor_applies or not alone.tables or alone.source in (None, source):
        return None
    if source in {a.source for a in close_calls(alone.alternatives)}:
        return None
    return alone.source
