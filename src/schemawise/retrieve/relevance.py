"""The relevance floor: is the question about this database at all?

Retrieval always returns the nearest documents, so a question about the weather, or gibberish,
would otherwise get a confident pack. Absolute measures say whether anything answers it:
which question words name the schema; how close the closest document is in meaning (the
cosine similarity of the question to the chosen database's best document); how many of the
question's content words the database's documents hold (names, descriptions, values); and,
word by word, how near the words it does not hold come to the schema's own ("vocalists" →
singer), which a sentence's similarity misses. "Nothing found" is an answer (DESIGN): below
the floor the pack is empty and says why. Pure: the measures in, a verdict out.
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
    # Measured only when nothing is named: each content word the database's documents do not
    # hold → the nearest word its tables and columns are named with, and how similar
    # ("aerodromes" → airport): a question in the user's own words is near the schema word by
    # word even when the sentence is far from every document.
    nearest: dict[str, tuple[str, float]] = {}
    # The same words → the nearest word of a table's name, and how similar.
    nearest_tables: dict[str, tuple[str, float]] = {}
    # The model that read the words (their similarities are on its scale).
    reader: str = ""
    # Measured only when nothing is named, by that reader: the question's cosine similarity,
    # as a sentence, to the nearest card (`orders: order id, customer id, amount`) of the
    # tables the search found best in the database (card_reading.nearest_card).
    card_similarity: float | None = None
    # Names the question writes with a capital (no sentence starting with them), and pairs of
    # adjacent words run together, that the database's documents hold ("Paris", "Peacock",
    # "quickplay"): a question about values of the data, which the card bar does not judge
    # (its words are the data's, not the tables').
    names_found: list[str] = []


@dataclass(frozen=True)
class RelevanceFloor:
    # A question that names nothing of the schema (no word of a table or column name or
    # comment) is still about the database if its words occur in the documents (values,
    # descriptions) and it is at least this close in meaning to one of them,
    similarity: float
    # or if one of its words the documents do not hold reads as a word the schema is named
    # with at least this similar, by the search's own embedder (the reading when no word
    # reader below is installed). None: no reading keeps a pack.
    reading: float | None = None
    # The embedder the similarities above were measured with: cosine scales differ between
    # models (all-MiniLM's unrelated words sit near 0.3), so under another one the floor does
    # not apply until it is measured for it (context.py).
    embedder: str = "wordllama-l2-256"
    # A reader of single words (all-MiniLM-L6-v2, int8 or numpy: the same model) places a
    # user's word near the schema's where the static embedder does not (aerodromes → airport
    # 0.64 against 0.29), and an off-topic word nearest a column's generic word (hour → time,
    # today → day) rather than a table's. When it read the words, a word at least
    # `table_reading` similar to a word of a table's name, or `column_reading` to any schema
    # word, keeps the pack; `reading` is not used.
    readers: tuple[str, ...] = ("all-minilm-l6-v2-int8", "all-minilm-l6-v2")
    table_reading: float = 0.55
    column_reading: float = 0.65
    # By the same reader, a question naming nothing of the schema is about none of it when it
    # reads, as a sentence, less similar than this to every table it found best, whatever
    # single words it shares with the data ("average water temperature of the lake in
    # August": `lake` is a value, and no table is about water temperatures).
    card_reading: float = 0.2


# `similarity`: the 1st percentile of the similarity of the even-numbered Spider dev and BIRD
# dev questions, pooled (0.2088; `bench linking --union --items`). `reading`: swept 0.2–0.5 on
# the even halves of the synonym set and of Spider dev, database given, against the
# even-numbered off-topic questions (src/schemawise/bench/off_topic.txt); 0.3 kept the most
# off-topic questions empty for one synonym question lost. `table_reading`, `column_reading`:
# swept 0.45–0.6 and 0.55–1.0 on the even-numbered questions of every set's items (replayed:
# the packs' words read again), the pair that lost no benchmark question and kept the fewest
# off-topic ones. `card_reading`: 0.15, 0.18, 0.2, 0.22 and 0.25 replayed on the even-numbered
# questions of every set's items (the packs' cards read again); 0.2, the highest that emptied
# no benchmark question holding its tables. Held-out halves and every set in docs/benchmarks.md
# ("The relevance floor", "Words read by a sentence model", "Questions that read as no table").
DEFAULT_FLOOR = RelevanceFloor(similarity=0.209, reading=0.3)


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
    if far_from_every_card(relevance, floor):
        return (
            f"nothing in the index is about this question: none of its words names a table or "
            f"column, and as a sentence it is {relevance.card_similarity:.2f} similar at most "
            f"to the tables that matched it best, under {floor.card_reading} (ask with the "
            f"schema's table and column names, or without the floor)"
        )
    if relevance.words_found and relevance.similarity >= floor.similarity:
        return None
    if _reads_as_schema(relevance, floor):
        return None
    # `words` counts adjacent words run together too (they are searched), so the reason
    # says how many were found, not "of how many": a question of 4 words searches 7.
    in_data = (
        f"{relevance.words_found} of the words searched for appear in the data"
        if relevance.words_found
        else "none of its words appears in the data"
    )
    reason = (
        f"nothing in the index is about this question: none of its words names a table or "
        f"column or reads as one, {in_data}, and its closest document is "
        f"{relevance.similarity:.2f} similar in meaning"
    )
    return reason + _nearest_hint(relevance, floor)


def far_from_every_card(relevance: Relevance, floor: RelevanceFloor) -> bool:
    """Whether the question, naming nothing, reads as none of the tables it found best."""
    if floor.reading is None or relevance.reader not in floor.readers:
        return False  # measured by no reader, or by one the bar was not set for
    if relevance.names_found:
        return False  # "Who lives in Paris?": about a value, not far from the data
    return relevance.card_similarity is not None and relevance.card_similarity < floor.card_reading


def _reads_as_schema(relevance: Relevance, floor: RelevanceFloor) -> bool:
    if floor.reading is None:
        return False  # no reading keeps a pack, by whichever model it was read
    if relevance.reader in floor.readers:
        return any(s >= floor.table_reading for _, s in relevance.nearest_tables.values()) or any(
            s >= floor.column_reading for _, s in relevance.nearest.values()
        )
    return any(similarity >= floor.reading for _, similarity in relevance.nearest.values())


def _nearest_hint(relevance: Relevance, floor: RelevanceFloor) -> str:
    """The closest the question's words came to the schema's, so that a user who meant them
    can ask again in the schema's words (or turn the floor off)."""
    closest = sorted(relevance.nearest.items(), key=lambda item: -item[1][1])[:3]
    if not closest or floor.reading is None:
        return ""
    readings = ", ".join(f"{word} → {reading} {similarity:.3f}" for word, (reading, similarity)
                         in closest)  # fmt: skip
    if relevance.reader in floor.readers:
        tables = sorted(relevance.nearest_tables.items(), key=lambda item: -item[1][1])[:1]
        table_note = "".join(
            f"; nearest table word: {word} → {reading} {similarity:.3f}, "
            f"under {floor.table_reading}"
            for word, (reading, similarity) in tables
        )
        bars = f"under the bar of {floor.column_reading}{table_note}"
    else:
        bars = f"under the bar of {floor.reading}"
    return (
        f" (nearest schema words: {readings}, {bars}; ask with the schema's words, or without "
        f"the floor)"
    )
