"""How near a question comes, as a sentence, to each database's tables: a vote for the
database choice when several are searched.

The search embeds documents with a static embedder (wordllama), which reads a question in a
user's own words far from the schema's ("how many crushes are recorded for each pupil id" is
no nearer to network_1's `Likes`, `Highschooler` than to other databases). The word reader
(all-MiniLM-L6-v2, the relevance floor's) reads whole sentences too, and better: so each
table is written as a short card, its name and its columns' ("likes: student id, liked id"),
and a database's nearness is its nearest card's cosine similarity to the question. The cards
are embedded once per schema version and reader, like the lexicon; only the databases the
search found anything in are read. Pure but for the embedder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from schemawise.graph.model import SchemaGraph
from schemawise.graph.naming import split_identifier
from schemawise.retrieve.by_version import ByVersion

if TYPE_CHECKING:
    from schemawise.index.embed import Embedder

# Card vectors by schema version and reader (by_version.py), table name → unit vector: read
# whole for the vote, table by table for the relevance floor (a catalog of 2,000 tables is not
# read whole for one question), each card once.
_CARDS: ByVersion[dict[str, np.ndarray]] = ByVersion()


def card_text(graph: SchemaGraph, table_index: int) -> str:
    """`order_items: order id, product id, qty`: the table's name and its columns', as words."""
    table = graph.tables[table_index]
    bare = table.name.rsplit(".", 1)[-1]
    columns = ", ".join(" ".join(split_identifier(c.name)) for c in table.columns)
    return f"{' '.join(split_identifier(bare))}: {columns}"


def card_vectors(graph: SchemaGraph, reader: Embedder) -> np.ndarray:
    """One unit vector per table of the graph, in its order."""
    if not graph.tables:
        return np.zeros((0, reader.dim))
    read = _read_cards(graph, [t.name for t in graph.tables], reader)
    return np.stack([read[t.name] for t in graph.tables])


def _read_cards(graph: SchemaGraph, tables: list[str], reader: Embedder) -> dict[str, np.ndarray]:
    """The cards read so far for this schema version, with `tables` (the graph's) among them:
    those not yet read are embedded in one call."""
    read = _CARDS.of(graph, f"cards:{reader.name}", lambda g: {})
    missing = [t for t in dict.fromkeys(tables) if t not in read]
    if missing:
        index = {t.name: i for i, t in enumerate(graph.tables)}
        vectors = _unit(reader.embed([card_text(graph, index[t]) for t in missing]))
        read.update(zip(missing, vectors, strict=True))
    return read


def card_nearness(
    question: str, graphs: dict[str, SchemaGraph], reader: Embedder
) -> dict[str, float]:
    """Source → the cosine similarity of the question to its nearest table card."""
    if not graphs:
        return {}
    asked = _unit(reader.embed([question]))[0]
    nearness: dict[str, float] = {}
    for source, graph in graphs.items():
        vectors = card_vectors(graph, reader)
        if len(vectors):
            nearness[source] = float((vectors @ asked).max())
    return nearness


def nearest_card(
    question: str, graph: SchemaGraph, tables: list[str], reader: Embedder
) -> float | None:
    """The cosine similarity of the question to the nearest card of `tables` (names of the
    graph's tables; others are skipped), or None when none is the graph's."""
    known = {t.name for t in graph.tables}
    wanted = [t for t in dict.fromkeys(tables) if t in known]
    if not wanted:
        return None
    read = _read_cards(graph, wanted, reader)
    asked = _unit(reader.embed([question]))[0]
    return float(max(read[t] @ asked for t in wanted))


def _unit(vectors: object) -> np.ndarray:
    array = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    return array / np.where(norms == 0, 1.0, norms)
