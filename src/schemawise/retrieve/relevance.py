"""The relevance floor: is the question about this database at all?

Retrieval always returns the nearest documents, so a question about the weather, or gibberish,
would otherwise get a confident pack. Two absolute measures say whether anything answers it:
how close the closest document is in meaning (the cosine similarity of the question to the
chosen database's best document), and how many of the question's content words the
database's documents hold (names, descriptions, values). "Nothing found" is an answer
(DESIGN): below the floor the pack is empty and says why. Pure: the measures in, a verdict out.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from schemawise.graph.model import SchemaGraph
from schemawise.retrieve.words import identifier_words, name_words, text_words


class Relevance(BaseModel):
    """What the floor read: part of the pack's contract (docs/json.md)."""

    similarity: float  # the question to the chosen database's closest document, cosine
    words: int  # content words in the question (and its evidence)
    words_found: int  # of them, those the database's documents hold
    found: list[str] = []  # those words, as the index stores them (stems)
    # The question's words that name a table or column of the database (or are in their
    # comments): the schema's own vocabulary, not a value that happens to match.
    named: list[str] = []


@dataclass(frozen=True)
class RelevanceFloor:
    # A question that names nothing of the schema (no word of a table or column name or
    # comment) is still about the database if its words occur in the documents (values,
    # descriptions) and it is at least this close in meaning to one of them.
    similarity: float


# Calibrated on the even-numbered questions of Spider dev and BIRD dev pooled (`bench linking
# --union --items`) and the even-numbered off-topic questions: the 1st percentile of the
# on-topic questions' similarity (0.2088). Held-out odd halves: no benchmark question emptied,
# 31 of 40 off-topic questions empty (docs/benchmarks.md, "The relevance floor"). Off unless
# asked for: a question written only in synonyms of the schema's words falls below it too.
DEFAULT_FLOOR = RelevanceFloor(similarity=0.209)


def schema_words(graph: SchemaGraph) -> frozenset[str]:
    """The words of the database's table and column names and comments, singular."""
    words: set[str] = set()
    for table in graph.tables:
        words |= name_words(table.name) | text_words(table.comment or "")
        for column in table.columns:
            words |= identifier_words(column.name) | text_words(column.comment or "")
    return frozenset(words)


def measure(
    distances: list[float | None],
    words: set[str],
    found: set[str],
    asked: set[str] = frozenset(),  # type: ignore[assignment]
    graph: SchemaGraph | None = None,
) -> Relevance:
    """`distances`: the cosine distances of the chosen database's hits (None: found by words);
    `words`, `found`: the question's lexemes and those the database holds; `asked`: the
    question's distinctive words (words.QuestionWords.asked), matched against the schema."""
    closest = min((d for d in distances if d is not None), default=1.0)
    held = sorted(found & words)
    named = sorted(asked & graph.cached("schema_words", schema_words)) if graph else []
    return Relevance(
        similarity=round(1.0 - closest, 4), words=len(words), words_found=len(held), found=held,
        named=named,
    )  # fmt: skip


def below_floor(relevance: Relevance, floor: RelevanceFloor | None) -> str | None:
    """Why nothing in the database answers the question, or None when something may."""
    if floor is None or relevance.named:
        return None
    if relevance.words_found and relevance.similarity >= floor.similarity:
        return None
    return (
        f"nothing in the index is about this question: none of its words names a table or "
        f"column, {relevance.words_found} of its {relevance.words} words appear in the data, "
        f"and its closest document is {relevance.similarity:.2f} similar in meaning"
    )
