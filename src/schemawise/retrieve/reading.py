"""Reading the index for a question: the context engine's only I/O.

The index is read here and nowhere else in the pipeline, before any table is scored: a
search over every source asked, the vocabulary those sources hold when several matched, and —
once the database is chosen — that database's own search, so that its tables are ranked on all
of its documents (the pooled search shared its candidates among the databases). The choice
between the two reads is a pure function handed in (retrieve/source_choice.py).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg

from schemawise.index import store

SEARCHED_KINDS = ("table", "column", "values", "path", "example", "glossary", "source")

# (pooled hits, source → the question's words its documents hold) → the sources best first,
# each with its vote relative to the best's; empty when nothing matched.
Chooser = Callable[[list[store.Hit], dict[str, set[str]]], list[tuple[str, float]]]


@dataclass(frozen=True)
class Search:
    lexical: str  # what the lexical side matches (words.QuestionWords.lexical)
    vocabulary: str  # what the vocabulary lookup matches (words.QuestionWords.vocabulary)
    vector: np.ndarray  # the question embedded
    sources: list[str] | None  # None: every indexed source
    candidates: int  # documents per search


@dataclass(frozen=True)
class IndexRead:
    source: str  # the database chosen
    hits: list[store.Hit]  # its documents, best first
    words: set[str]  # the question's content words, as the index stores words
    words_found: set[str]  # of them, those the chosen database's documents hold
    ranking: list[tuple[str, float]]  # every matched database with its relative vote, best first


def read_index(
    conn: psycopg.Connection[Any], search: Search, known: Collection[str], choose: Chooser
) -> IndexRead | None:
    """The chosen database and its hits, or None when nothing current matched. `known`: the
    sources whose graph is at hand (the index may also hold documents of other runs, such as
    benchmark catalogs, which could not be connected or pruned)."""
    hits = [h for h in _search(conn, search, search.sources) if h.source in known]
    matched = list(dict.fromkeys(h.source for h in hits))
    several = len(matched) > 1
    found = store.words_found(conn, search.vocabulary, matched) if several else {}
    ranking = choose(hits, found)
    if not ranking:
        return None
    source = ranking[0][0]
    if not several:  # the relevance floor reads them for the one source too
        found = store.words_found(conn, search.vocabulary, [source])
    return IndexRead(
        source, _search(conn, search, [source]) if several else hits,
        store.lexemes(conn, search.vocabulary), found.get(source, set()), ranking,
    )  # fmt: skip


def _search(
    conn: psycopg.Connection[Any], search: Search, sources: list[str] | None
) -> list[store.Hit]:
    return store.search(
        conn, search.lexical, search.vector, kinds=SEARCHED_KINDS, sources=sources,
        n=search.candidates,
    )  # fmt: skip
