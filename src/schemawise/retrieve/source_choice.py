"""Which database a question is about, when several are searched together: the votes.

One database per question: the source whose documents match the question best overall (every
hit votes, so that many weak matches in one database beat one strong elsewhere), with the
agreement of its tables' evidence, how much of the question's vocabulary it holds, how many of
its tables the question names and which column names written out it has. Pure: the pooled
hits and the vocabulary the index found in, a source name out.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING

from schemawise.graph.model import SchemaGraph
from schemawise.retrieve.evidence import column_holders, table_evidence
from schemawise.retrieve.pack import SourceScore
from schemawise.retrieve.settings import RETRIEVAL, ContextSettings, RetrievalSettings
from schemawise.retrieve.words import QuestionWords, name_words, names_table

if TYPE_CHECKING:  # the type only: reading the index is retrieve/reading.py's job
    from schemawise.index.store import Hit


def vote(
    hits: list[Hit],
    found: dict[str, set[str]],  # source → the question's words its documents hold
    graphs: dict[str, SchemaGraph],
    sources: list[str] | None,
    words: QuestionWords,
    settings: ContextSettings,
    near: dict[str, float] | None = None,  # how near each source's lexicon comes (lexicon.py)
    cards: Callable[[list[str]], dict[str, float]] | None = None,  # card_reading.py
) -> list[tuple[str, float]]:
    """The databases the pooled hits are about, best first, each with its vote relative to the
    best's (1.0: as good); empty when nothing matched (an empty pack, not a guess). `cards`:
    given the sources the hits are in, how near the question comes to each one's nearest table
    card (read only for those)."""
    evidence = table_evidence(hits, graphs, sources, words.spelled, words.asked, settings)
    if not evidence.scores:
        return []
    by_source: dict[str, list[float]] = defaultdict(list)
    for hit in hits:
        by_source[hit.source].append(hit.score)
    if len(by_source) <= 1:
        return [(source, 1.0) for source in by_source]
    in_scope = len(sources) if sources else len(graphs)
    named = {s: tables_named(graphs[s], words.asked) for s in by_source}
    written = columns_written(graphs, sources, words.spelled)
    return rank_sources(
        by_source, evidence.scores, coverage(found, in_scope), named, coverage(written, in_scope),
        {s: v for s, v in (near or {}).items() if s in by_source},
        cards(sorted(by_source)) if cards is not None else None,
    )  # fmt: skip


def columns_written(
    graphs: dict[str, SchemaGraph], sources: list[str] | None, spelled: set[str]
) -> dict[str, set[str]]:
    """Source → the column names written out (words.written_names) that it has."""
    return {
        name: held
        for name, graph in graphs.items()
        if not sources or name in sources
        for held in [spelled & graph.cached("column_holders", column_holders).keys()]
        if held
    }


def tables_named(graph: SchemaGraph, asked: set[str]) -> int:
    """How many distinct table names the question names outright."""
    return len({name_words(t.name) for t in graph.tables if names_table(t.name, asked)})


def coverage(found: dict[str, set[str]], in_scope: int) -> dict[str, float]:
    """Source → the share of the question's words it has, each word weighted by how few of
    the sources have it (a word every database has tells none apart)."""
    holders: dict[str, int] = defaultdict(int)
    for words in found.values():
        for word in words:
            holders[word] += 1
    # Inverse document frequency over sources: a word every source has weighs almost nothing
    # (log((N + 1) / N)), a word one source has log(N + 1).
    weight = {w: math.log((in_scope + 1) / n) for w, n in holders.items()}
    total = sum(weight.values()) or 1.0
    return {s: sum(weight[w] for w in words) / total for s, words in found.items()}


def rank_sources(
    by_source: dict[str, list[float]],
    scores: dict[tuple[str, str], float],
    coverage: dict[str, float] | None = None,
    named: dict[str, int] | None = None,
    written: dict[str, float] | None = None,
    near: dict[str, float] | None = None,
    cards: dict[str, float] | None = None,
    *,
    tuning: RetrievalSettings = RETRIEVAL,
) -> list[tuple[str, float]]:
    """The databases by how much the question is about each: its best `top_hits` document
    scores (many matching documents), a share of its best two tables' scores (cards, columns
    and paths agreeing on the same tables), how much of the question's vocabulary it has, how
    many of its tables the question names, the column names written out it has, how near its
    lexicon comes to the words no schema uses, and how near the question comes to its nearest
    table card, each normalised by the best database's. Best first, each with its vote over
    the best's."""
    tables: dict[str, list[float]] = defaultdict(list)
    for (src, _), score in scores.items():
        tables[src].append(score)
    hits = {s: sum(sorted(v, reverse=True)[: tuning.top_hits]) for s, v in by_source.items()}
    agreed = {s: sum(sorted(tables.get(s, [0.0]), reverse=True)[:2]) for s in by_source}
    covered = coverage or {}
    top_hits, top_tables = max(hits.values()) or 1.0, max(agreed.values()) or 1.0
    top_covered = max(covered.values(), default=0.0) or 1.0
    named = named or {}
    top_named = max(named.values(), default=0) or 1
    written = written or {}
    top_written = max(written.values(), default=0.0) or 1.0
    near = near or {}
    top_near = max(near.values(), default=0.0) or 1.0
    # A cosine under 0 says no more than 0 does: it must not lower a vote.
    cards = {s: max(v, 0.0) for s, v in (cards or {}).items()}
    top_card = max(cards.values(), default=0.0) or 1.0
    votes = {
        s: hits[s] / top_hits
        + tuning.table_vote * agreed[s] / top_tables
        + tuning.coverage_vote * covered.get(s, 0.0) / top_covered
        + tuning.named_vote * named.get(s, 0) / top_named
        + tuning.written_vote * written.get(s, 0.0) / top_written
        + tuning.lexicon_vote * near.get(s, 0.0) / top_near
        + tuning.card_vote * cards.get(s, 0.0) / top_card
        for s in by_source
    }
    # Ties go to the first name in order, as `max` over the sorted names did.
    ranked = sorted(sorted(votes), key=lambda s: -votes[s])
    best = votes[ranked[0]] or 1.0
    return [(s, round(votes[s] / best, 4)) for s in ranked]


def close_calls(
    alternatives: list[SourceScore], tuning: RetrievalSettings = RETRIEVAL
) -> list[SourceScore]:
    """The runners-up that fit the question about as well as the chosen database: the ones
    to name (or ask about) rather than pass over in silence."""
    return [a for a in alternatives if a.score >= tuning.close_call]


# A second opinion on the database (the assistant's model: agent/rank.py `source_picker`):
# given the question and the databases that came close, best first, the one it is about, or
# None to leave the vote's choice.
SourcePicker = Callable[[str, list[str]], str | None]


def put_to_picker(
    ranking: list[tuple[str, float]], tuning: RetrievalSettings = RETRIEVAL
) -> list[str]:
    """The databases a picker chooses among: the vote's choice and the runners-up within
    `picker_window` of it, `picker_candidates` at most; fewer than two means no choice."""
    near = [s for s, v in ranking[: tuning.picker_candidates] if v >= tuning.picker_window]
    return near if len(near) > 1 else []


def second_opinion(
    question: str,
    ranking: list[tuple[str, float]],
    picker: SourcePicker | None,
    tuning: RetrievalSettings = RETRIEVAL,
) -> tuple[list[tuple[str, float]], bool]:
    """The ranking with the picker's choice first, each vote then relative to the chosen
    database's (a runner-up the vote preferred scores above 1), and whether the picker changed
    the choice. Unchanged without a picker, without a close call, or when the picker names
    none of the candidates."""
    candidates = put_to_picker(ranking, tuning) if picker is not None else []
    if not candidates or picker is None:
        return ranking, False
    picked = picker(question, candidates)
    if picked not in candidates or picked == ranking[0][0]:
        return ranking, False
    votes = dict(ranking)
    best = votes[picked] or 1.0
    order = [picked, *(s for s, _ in ranking if s != picked)]
    return [(s, round(votes[s] / best, 4)) for s in order], True
