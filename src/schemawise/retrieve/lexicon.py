"""The schema's own lexicon: a question word no searched schema uses is read as the schema
word nearest to it by the embedder ("vocalists" → singer, "arenas" → stadium), so that a user
who does not know the schema's words still finds its tables.

Words are compared one by one, not as sentences: a sentence embedding of "how many vocalists"
is far from a card about singers, while the word "vocalists" is nearest to "singer" among the
few hundred words a database's tables and columns are named with. The lexicon is each graph's
own identifier words, embedded once per graph (and embedder) and kept with it; no word list
is written here (what counts as a word of English is wordfreq's counts, below).

How near a lexicon comes to a word depends on its size as well as on meaning: among TPC-DS's
173 words one is near any word by chance more often than among network_1's 7 (the mean best
similarity to a sample of the tokenizer's vocabulary is 0.25 for TPC-DS, 0.09 for Spider's
network_1). So a database's nearness in the vote is measured against chance: against how near
its lexicon comes to a fixed sample of the tokenizer's vocabulary (about 520 word-start tokens;
`Lexicon.chance`, their mean and spread), in units of that spread. (The relevance floor's word
readings keep their plain similarity: replayed on the same questions, a bar in these units
emptied no more off-topic questions for the synonym questions it lost; docs/benchmarks.md.)

Only words of English are compared (`known_words.is_word`), on both sides: a question's "zzqx"
or "qwer" has no meaning to compare, nor has a schema's `hdemo` or `availqty` (letters glued
from its names: "hive" came 0.75 near `hdemo`, "cake" 0.47 near `cdemo`). A word run together
(`shipmode`) is read as its parts (ship, mode), as the index splits it. The readings are
therefore English only: a schema or question in another language reads little or nothing
(its words are still searched as written, and found when the index holds them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from schemawise.graph.model import SchemaGraph
from schemawise.graph.naming import singular, split_identifier
from schemawise.index.compounds import parts
from schemawise.known_words import is_word, vocabulary
from schemawise.retrieve.by_version import ByVersion
from schemawise.retrieve.words import content_words

if TYPE_CHECKING:  # the embedder is handed in: this stage does no I/O of its own
    from schemawise.index.embed import Embedder

# Shorter identifier words are abbreviations and codes (`id`, `no`, `fk`): not worth matching.
MIN_LETTERS = 3
# Every how-many-th word of the tokenizer's vocabulary (10,429 words) is in the sample that
# measures a lexicon's nearness by chance: about 520 words.
CHANCE_SAMPLE_STEP = 20
# The least spread a chance measure is given, so that a lexicon whose chance nearness hardly
# varies (a tiny one, a toy embedder) does not turn every small difference into a large one.
MIN_SPREAD = 0.01


def schema_words(graph: SchemaGraph) -> list[str]:
    """The words the graph's tables and columns are named with that are words of English
    (`known_words.is_word`: not `hdemo`, `availqty`), each singular when its singular is one
    (`movies` stays `movies`: the rule's `movy` is not), and the parts of a glued word that is
    not one (`shipmode`: ship, mode, as the index splits it; `deadline` stays whole), sorted."""
    written: set[str] = set()
    for table in graph.tables:
        written |= set(split_identifier(table.name.rsplit(".", 1)[-1]))
        for column in table.columns:
            written |= set(split_identifier(column.name))
    return _english(written)


def table_words(graph: SchemaGraph) -> frozenset[str]:
    """The words of `schema_words` that the tables' own names give (`flight`, `airport`)."""
    written: set[str] = set()
    for table in graph.tables:
        written |= set(split_identifier(table.name.rsplit(".", 1)[-1]))
    return frozenset(_english(written))


def _english(written: set[str]) -> list[str]:
    found: set[str] = set()
    for word in written:
        if len(word) < MIN_LETTERS or not word.isalpha():
            continue
        one = singular(word)
        if is_word(one) or is_word(word):
            found.add(one if is_word(one) else word)
        elif split := parts(word):
            found |= {singular(part) for part in split}
    return sorted(w for w in found if len(w) >= MIN_LETTERS and is_word(w))


@dataclass(frozen=True)
class Lexicon:
    words: list[str]
    vectors: np.ndarray  # one unit row per word
    # How near the lexicon comes to the chance sample's words: the mean and the spread of
    # their best similarities (measured for the vote only).
    chance: tuple[float, float] = (0.0, 1.0)
    # Those of `words` that name a table.
    tables: frozenset[str] = frozenset()


# Lexicons by schema version and embedder (by_version.py).
_LEXICONS: ByVersion[Lexicon] = ByVersion()
# The chance sample's vectors, by embedder name.
_CHANCE_SAMPLES: dict[str, np.ndarray] = {}


def _lexicon(graph: SchemaGraph, embedder: Embedder, chance: bool = True) -> Lexicon:
    """`chance`: measure the lexicon's nearness by chance too (the vote needs it; the floor's
    word readings do not, and it costs some 500 words embedded)."""

    def build(g: SchemaGraph) -> Lexicon:
        words = schema_words(g)
        tables = table_words(g)
        if not words:
            return Lexicon(words, np.zeros((0, embedder.dim)), tables=tables)
        vectors = _unit(embedder.embed(words))
        measured = _chance(vectors, embedder) if chance else (0.0, 1.0)
        return Lexicon(words, vectors, measured, tables)

    return _LEXICONS.of(graph, f"lexicon:{embedder.name}:{chance}", build)


def _chance(vectors: np.ndarray, embedder: Embedder) -> tuple[float, float]:
    """The mean and spread of how near a lexicon's best word comes to the chance sample's."""
    if embedder.name not in _CHANCE_SAMPLES:
        words = sorted(vocabulary())[::CHANCE_SAMPLE_STEP]
        _CHANCE_SAMPLES[embedder.name] = (
            _unit(embedder.embed(words)) if words else np.zeros((0, embedder.dim))
        )
    sample = _CHANCE_SAMPLES[embedder.name]
    if not len(sample):
        return 0.0, 1.0
    best = (sample @ vectors.T).max(axis=1)
    return float(best.mean()), max(float(best.std()), MIN_SPREAD)


def _unit(vectors: np.ndarray) -> np.ndarray:
    array = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    return array / np.where(norms == 0, 1.0, norms)


def unknown_words(text: str) -> list[str]:
    """The content words of `text` that may be read as schema words (letters only, not short,
    and words of English: "zzqx" or "qwer" has no meaning to compare)."""
    return sorted(
        {w for w in content_words(text) if w.isalpha() and len(w) >= MIN_LETTERS and is_word(w)}
    )


@dataclass(frozen=True)
class Readings:
    """What a question's unseen words read as in the searched schemas."""

    # word → the nearest lexicon word over every graph (searched for lexically)
    words: dict[str, str] = field(default_factory=dict)
    # graph name → how near its own lexicon comes to the unseen words: per word, by how much
    # its best similarity, measured against its chance nearness, beats chance and the average
    # graph's, summed (_near; the database vote's `lexicon_vote`)
    near: dict[str, float] = field(default_factory=dict)


def schema_readings(
    words: list[str], graphs: dict[str, SchemaGraph], embedder: Embedder, threshold: float
) -> Readings:
    """Each of `words` that no graph's lexicon holds → the lexicon word nearest to it over all
    the graphs, when at least `threshold` similar (cosine); and how near each graph comes."""
    lexicons = {name: _lexicon(g, embedder) for name, g in graphs.items()}
    known = {w for lexicon in lexicons.values() for w in lexicon.words}
    unknown = [w for w in words if w not in known and singular(w) not in known]
    if not unknown:
        return Readings()
    asked = _unit(embedder.embed(unknown))
    best: dict[str, tuple[float, str]] = {}
    nearest: dict[str, np.ndarray] = {}
    for source, lexicon in lexicons.items():
        names = lexicon.words
        if not names:
            continue
        similarity = asked @ lexicon.vectors.T
        mean, spread = lexicon.chance
        nearest[source] = (similarity.max(axis=1) - mean) / spread
        for i, word in enumerate(unknown):
            j = int(np.argmax(similarity[i]))
            if similarity[i, j] >= threshold and similarity[i, j] > best.get(word, (-1.0, ""))[0]:
                best[word] = (float(similarity[i, j]), names[j])
    return Readings({word: reading for word, (_, reading) in best.items()}, _near(nearest))


@dataclass(frozen=True)
class WordReadings:
    """The relevance floor's word-by-word measure: each question word the schema does not
    hold → its nearest schema word and how similar, and → its nearest word of a table name."""

    nearest: dict[str, tuple[str, float]] = field(default_factory=dict)
    tables: dict[str, tuple[str, float]] = field(default_factory=dict)
    reader: str = ""  # the model that read them; empty when no word was read


def nearest_schema_words(words: list[str], graph: SchemaGraph, embedder: Embedder) -> WordReadings:
    """Each of `words` that the graph's lexicon does not hold → its nearest lexicon word and
    how similar (cosine), and its nearest word of a table's name: how close a question that
    names nothing of the schema comes to it, word by word (the relevance floor's third
    measure)."""
    lexicon = _lexicon(graph, embedder, chance=False)
    names, vectors = lexicon.words, lexicon.vectors
    held = set(names)
    unknown = [w for w in words if w not in held and singular(w) not in held]
    if not unknown or not names:
        return WordReadings()
    similarity = _unit(embedder.embed(unknown)) @ vectors.T
    best = similarity.argmax(axis=1)
    nearest = {
        word: (names[int(j)], round(float(similarity[i, j]), 4))
        for i, (word, j) in enumerate(zip(unknown, best, strict=True))
    }
    table_at = [j for j, name in enumerate(names) if name in lexicon.tables]
    tables: dict[str, tuple[str, float]] = {}
    if table_at:
        among = similarity[:, table_at]
        for i, word in enumerate(unknown):
            j = int(among[i].argmax())
            tables[word] = (names[table_at[j]], round(float(among[i, j]), 4))
    return WordReadings(nearest, tables, embedder.name)


def _near(nearest: dict[str, np.ndarray]) -> dict[str, float]:
    """Source → by how much its lexicon's nearest words beat chance and the average source's
    (both in its chance spreads), summed over the words: a word every schema is about as near
    to (a question's "include", "under") tells none of them apart, and a large lexicon does
    not win by its size."""
    if not nearest:
        return {}
    floor = np.maximum(np.mean(list(nearest.values()), axis=0), 0.0)
    return {s: float(np.clip(v - floor, 0.0, None).sum()) for s, v in nearest.items()}


def words_reading_as_names(
    words: list[str], tables: list[str], graph: SchemaGraph, reader: Embedder, bar: float
) -> dict[str, dict[str, str]]:
    """Table → {question word: the word of its name it reads as}, for each of `words` at least
    `bar` similar to a word of the table's own name ("buddies" → `friend`): a table the
    question asks for in other words than its name's."""
    lexicon = _lexicon(graph, reader, chance=False)
    at = {word: i for i, word in enumerate(lexicon.words)}
    unknown = [w for w in words if w not in at and singular(w) not in at]
    if not unknown or not len(lexicon.vectors):
        return {}
    similarity = _unit(reader.embed(unknown)) @ lexicon.vectors.T
    read: dict[str, dict[str, str]] = {}
    for table in tables:
        own = [w for w in _english(set(split_identifier(table.rsplit(".", 1)[-1]))) if w in at]
        for i, word in enumerate(unknown):
            best = max(own, key=lambda w: similarity[i, at[w]], default=None)
            if best is not None and similarity[i, at[best]] >= bar:
                read.setdefault(table, {})[word] = best
    return read
