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


class Relevance(BaseModel):
    """What the floor read: part of the pack's contract (docs/json.md)."""

    similarity: float  # the question to the chosen database's closest document, cosine
    words: int  # content words in the question (and its evidence)
    words_found: int  # of them, those the database's documents hold


@dataclass(frozen=True)
class RelevanceFloor:
    # Closeness in meaning alone that makes a database relevant, whatever the words.
    similarity: float
    # With at least `words_found` of the question's words in the database's documents, this
    # lower closeness is enough.
    similarity_with_words: float
    words_found: int = 1


def measure(distances: list[float | None], words: set[str], found: set[str]) -> Relevance:
    """`distances`: the cosine distances of the chosen database's hits (None: found by words)."""
    closest = min((d for d in distances if d is not None), default=1.0)
    return Relevance(
        similarity=round(1.0 - closest, 4), words=len(words), words_found=len(found & words)
    )


def below_floor(relevance: Relevance, floor: RelevanceFloor | None) -> str | None:
    """Why nothing in the database answers the question, or None when something may."""
    if floor is None or relevance.similarity >= floor.similarity:
        return None
    if (
        relevance.words_found >= floor.words_found
        and relevance.similarity >= floor.similarity_with_words
    ):
        return None
    return (
        f"nothing in the index is about this question: its closest document is "
        f"{relevance.similarity:.2f} similar in meaning and {relevance.words_found} of its "
        f"{relevance.words} words appear in the database"
    )
