"""A conversation's next turn: a follow-up of its subject, or a new subject.

A follow-up ("now split it by month") rarely names what it is about, so it is read together
with the questions of its subject (retrieve/context.py, `follows`), on the database the subject
was answered from, and the writer sees the subject's earlier SQL. A subject is the turns from
the one that began it: its first turn, or one that moved on.

A turn moves on only on positive evidence: asked on its own of every database searched, it
clears the relevance floor on another database than the subject's, and the subject's is not a
close call beside it ("how many singers are from each country?" after questions on Chinook;
"year over year growth" after car_1 stays, though another database has a year too); or the
subject's database is no longer searched.
Nothing else moves it. A follow-up's own words are too few to tell whether it has left the
subject ("what's the median?", "in euros", "only Motörhead" name nothing of the schema and are
still about it), so a turn about nothing at all ("zzqx blorf") stays a follow-up too, and the
model answers from the conversation. Pure: the turns and the packs in, the decision out.
"""

from __future__ import annotations

from collections.abc import Sequence

from schemawise.agent.conversation import Turn
from schemawise.retrieve.pack import ContextPack
from schemawise.retrieve.source_choice import close_calls

# The subject's questions read with a follow-up: the latest ones (the writer's prompt shows
# the last three turns too); older ones dilute the words that matter now.
SUBJECT_QUESTIONS = 3


def subject(turns: Sequence[Turn]) -> list[Turn]:
    """The turns of the conversation's current subject, oldest first: back from the last turn
    to the one that began it (read with nothing earlier)."""
    found: list[Turn] = []
    for turn in reversed(turns):
        found.append(turn)
        if not turn.follows:
            break
    return found[::-1]


def follows_text(turns: Sequence[Turn]) -> str:
    """The subject's latest questions, one per line: what a follow-up is read with."""
    return "\n".join(t.question for t in turns[-SUBJECT_QUESTIONS:])


def subject_source(turns: Sequence[Turn]) -> str | None:
    """The database the subject was last answered from (None: none was, or the turns were
    kept before turns recorded it)."""
    return next((t.source for t in reversed(turns) if t.source), None)


def moves_on(alone: ContextPack, source: str | None, searched: Sequence[str],
             floor_applies: bool) -> bool:  # fmt: skip
    """Is the turn a new subject? `alone`: its pack asked on its own of every database
    searched, under the floor; `source`: the subject's database; `searched`: the databases
    asked now; `floor_applies`: the floor was measured for the embedder in use (under another
    one an unfloored pack is no evidence: the turn stays)."""
    if source is None:
        return False
    if source not in searched:
        return True  # the subject's database is gone, or no longer asked
    if not floor_applies or not alone.tables or alone.source in (None, source):
        return False
    return source not in {a.source for a in close_calls(alone.alternatives)}
