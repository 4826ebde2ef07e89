"""The schema's own lexicon: a question word no searched schema uses is read as the schema
word nearest to it by the embedder ("vocalists" → singer, "arenas" → stadium), so that a user
who does not know the schema's words still finds its tables.

Words are compared one by one, not as sentences: a sentence embedding of "how many vocalists"
is far from a card about singers, while the word "vocalists" is nearest to "singer" among the
few hundred words a database's tables and columns are named with. The lexicon is each graph's
own identifier words, embedded once per graph (and embedder) and kept with it; no list of
English words is involved.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from schemawise.graph.model import SchemaGraph
from schemawise.graph.naming import singular
from schemawise.retrieve.words import content_words, identifier_words

if TYPE_CHECKING:  # the embedder is handed in: this stage does no I/O of its own
    from schemawise.index.embed import Embedder

# Shorter identifier words are abbreviations and codes (`id`, `no`, `fk`): not worth matching.
MIN_LETTERS = 3


def schema_words(graph: SchemaGraph) -> list[str]:
    """The words the graph's tables and columns are named with, sorted."""
    found: set[str] = set()
    for table in graph.tables:
        found |= identifier_words(table.name.rsplit(".", 1)[-1])
        for column in table.columns:
            found |= identifier_words(column.name)
    return sorted(w for w in found if len(w) >= MIN_LETTERS and w.isalpha())


# Lexicons by (schema version, embedder): `api.context` and the assistant load the graphs
# afresh for each question, so a cache on the graph object alone would embed every word of the
# schema again each time. A version names one schema's tables and columns exactly
# (SchemaGraph.compute_version).
_BY_VERSION: dict[tuple[str, str], tuple[list[str], np.ndarray]] = {}
_KEPT_VERSIONS = 64


def _lexicon(graph: SchemaGraph, embedder: Embedder) -> tuple[list[str], np.ndarray]:
    def build(g: SchemaGraph) -> tuple[list[str], np.ndarray]:
        key = (g.version, embedder.name) if g.version else None
        if key is not None and key in _BY_VERSION:
            return _BY_VERSION[key]
        words = schema_words(g)
        built = (
            (words, _unit(embedder.embed(words))) if words else (words, np.zeros((0, embedder.dim)))
        )
        if key is not None:
            if len(_BY_VERSION) >= _KEPT_VERSIONS:
                _BY_VERSION.pop(next(iter(_BY_VERSION)))
            _BY_VERSION[key] = built
        return built

    return graph.cached(f"lexicon:{embedder.name}", build)


def _unit(vectors: np.ndarray) -> np.ndarray:
    array = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    return array / np.where(norms == 0, 1.0, norms)


def unknown_words(text: str) -> list[str]:
    """The content words of `text` that may be read as schema words (letters only, not short)."""
    return sorted({w for w in content_words(text) if w.isalpha() and len(w) >= MIN_LETTERS})


@dataclass(frozen=True)
class Readings:
    """What a question's unseen words read as in the searched schemas."""

    # word → the nearest lexicon word over every graph (searched for lexically)
    words: dict[str, str] = field(default_factory=dict)
    # graph name → how near its own lexicon comes to the unseen words: per word, by how much
    # its best similarity beats the threshold and the average graph's, summed (_near; the
    # database vote's `lexicon_vote`)
    near: dict[str, float] = field(default_factory=dict)


def schema_readings(
    words: list[str], graphs: dict[str, SchemaGraph], embedder: Embedder, threshold: float
) -> Readings:
    """Each of `words` that no graph's lexicon holds → the lexicon word nearest to it over all
    the graphs, when at least `threshold` similar (cosine); and how near each graph comes."""
    lexicons = {name: _lexicon(g, embedder) for name, g in graphs.items()}
    known = {w for names, _ in lexicons.values() for w in names}
    unknown = [w for w in words if w not in known and singular(w) not in known]
    if not unknown:
        return Readings()
    asked = _unit(embedder.embed(unknown))
    best: dict[str, tuple[float, str]] = {}
    nearest: dict[str, np.ndarray] = {}
    for source, (names, vectors) in lexicons.items():
        if not names:
            continue
        similarity = asked @ vectors.T
        nearest[source] = similarity.max(axis=1)
        for i, word in enumerate(unknown):
            j = int(np.argmax(similarity[i]))
            if similarity[i, j] >= threshold and similarity[i, j] > best.get(word, (-1.0, ""))[0]:
                best[word] = (float(similarity[i, j]), names[j])
    return Readings(
        {word: reading for word, (_, reading) in best.items()}, _near(nearest, threshold)
    )


def nearest_schema_words(
    words: list[str], graph: SchemaGraph, embedder: Embedder
) -> dict[str, tuple[str, float]]:
    """Each of `words` that the graph's lexicon does not hold → its nearest lexicon word and
    how similar (cosine): how close a question that names nothing of the schema comes to it,
    word by word (the relevance floor's third measure)."""
    names, vectors = _lexicon(graph, embedder)
    held = set(names)
    unknown = [w for w in words if w not in held and singular(w) not in held]
    if not unknown or not names:
        return {}
    similarity = _unit(embedder.embed(unknown)) @ vectors.T
    best = similarity.argmax(axis=1)
    return {
        word: (names[int(j)], round(float(similarity[i, j]), 4))
        for i, (word, j) in enumerate(zip(unknown, best, strict=True))
    }


def _near(nearest: dict[str, np.ndarray], threshold: float) -> dict[str, float]:
    """Source → by how much its lexicon's nearest words beat the threshold and the average
    source's, summed over the words: a word every schema is about as near to (a question's
    "include", "under") tells none of them apart."""
    if not nearest:
        return {}
    floor = np.maximum(np.mean(list(nearest.values()), axis=0), threshold)
    return {s: float(np.clip(v - floor, 0.0, None).sum()) for s, v in nearest.items()}
