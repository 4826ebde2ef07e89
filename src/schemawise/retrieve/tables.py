"""The pack's tables: the chosen database's table evidence, reranked by structure (rank/),
connected by the cheapest tree of joins (graph/paths.py), each with its score and reasons."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from schemawise.enrich.metadata import Metadata
from schemawise.errors import NoJoinPathError
from schemawise.graph.model import SchemaGraph, unreadable_tables
from schemawise.graph.paths import JoinPath, PathEdge, connecting_tree, grain_and_warnings
from schemawise.rank.structural import (
    Candidate,
    PassedOver,
    RankSettings,
    apply_metadata,
    apply_schema_mentions,
    choose,
)
from schemawise.retrieve.dates import date_dimensions
from schemawise.retrieve.evidence import TableEvidence, asked_by_other_name, table_terms
from schemawise.retrieve.pack import TableChoice, short_description
from schemawise.retrieve.settings import ContextSettings


@dataclass(frozen=True)
class ChosenTables:
    tables: list[TableChoice]  # the chosen tables best first, then the bridges
    join_paths: list[dict[str, Any]]  # JoinPath documents
    # Every candidate left out, best first, each with why first (the pack names the first
    # `ContextSettings.passed_over` of them).
    passed_over: list[TableChoice] = field(default_factory=list)


def choose_tables(
    question: str,
    evidence: TableEvidence,
    source: str,
    graph: SchemaGraph,
    meta: Metadata | None,
    asked: set[str],
    settings: ContextSettings,
    brought: dict[str, str] | None = None,
    read_as: dict[str, dict[str, str]] | None = None,
) -> ChosenTables:
    """`brought`: tables the pack must hold whatever retrieval found (a definition the
    question asks about names them), each with its reason; they join the rerank's choice.
    `read_as`: table → the question's words that read as a word of its name (lexicon.py
    `words_reading_as_names`), which the table then accounts for."""
    read_as = read_as or {}
    brought = {t: r for t, r in (brought or {}).items() if graph.table(t) is not None}
    candidates = [
        Candidate(
            table=table,
            score=score,
            terms=table_terms(graph, meta, table, asked, [c for c, _ in matched]),
            reasons=list(evidence.reasons.get(key, [])),
            pinned=key in evidence.pinned,
        )
        for key, score in evidence.scores.items()
        if key[0] == source
        for table, matched in [(key[1], evidence.columns.get(key, []))]
    ]
    for candidate in candidates:
        if also := asked_by_other_name(graph, meta, candidate.table, asked):
            candidate.reasons.append(f"its other names match: {', '.join(also)}")
        if readings := read_as.get(candidate.table):
            candidate.terms = candidate.terms | set(readings)
            said = ", ".join(f"{w} → {n}" for w, n in sorted(readings.items()))
            candidate.reasons.append(f"the question's words read as its name: {said}")
    apply_metadata(candidates, meta)
    apply_schema_mentions(candidates, asked)
    ranking = RankSettings(
        max_tables=settings.max_tables,
        relative_cutoff=settings.relative_cutoff,
        question_words=len(asked),
    )
    left_out: list[PassedOver] = []
    picked = choose(candidates, graph, ranking, meta.usage if meta else None, passed_over=left_out)
    # The first table's score every passed-over share is of (before a ranker reorders them).
    top = picked[0].score if picked else 0.0
    if settings.ranker is not None:
        ranked = settings.ranker(question, picked) or picked[:1]
        kept = {c.table for c in ranked}
        best = picked[0].score or 1.0
        left_out[:0] = [
            PassedOver(c, c.score / best, "ranker", "the second opinion on the tables left it out")
            for c in picked if c.table not in kept
        ]  # fmt: skip
        picked = ranked
    names = [c.table for c in picked]
    # A time phrase needs the table of dates the chosen facts reference (retrieve/dates.py).
    brought = {**date_dimensions(question, graph, names), **brought}
    names += [t for t in brought if t not in names]
    tables, paths, notes = connect(graph, names)
    first = picked[0].score if picked and picked[0].score else 1.0
    left_out[:0] = [
        PassedOver(c, c.score / first, "unjoined",
                   f"joins other tables but not {names[0]}, the first: about something else")
        for c in picked if c.table not in tables
    ]  # fmt: skip
    # The reasons retrieval gave, what the rerank added (for a bridge it did not pick, its
    # metadata reasons), then what connecting found.
    reasons = {c.table: c.reasons for c in candidates}
    for table, reason in brought.items():
        reasons[table] = [*reasons.get(table, []), reason]
    # A bridge the rerank did not pick keeps its retrieval score: 0 only if nothing matched it.
    score_of = {name: evidence.scores.get((source, name), 0.0) for name in tables}
    score_of |= {c.table: c.score for c in picked}
    # A table a definition brings is as needed as the weakest table the rerank chose: a
    # token budget should not drop it first because retrieval never matched it.
    weakest = min((c.score for c in picked), default=0.0)
    for table in brought:
        score_of[table] = max(score_of.get(table, 0.0), weakest)
    # A table the indexing role could not read: its structure is known, its rows may not be.
    for name in unreadable_tables(graph.problems) & set(tables):
        notes.setdefault(name, []).append(
            "the role that indexed it could not read it: a query on it may be refused"
        )
    choices = [
        TableChoice(
            name=name,
            score=round(score_of.get(name, 0.0), 5),
            reasons=counted([*reasons.get(name, []), *notes.get(name, [])])
            or ["joins the chosen tables"],
            description=table_description(graph, meta, name),
        )
        for name in tables
    ]
    # A table passed over is scored as the bar it failed compared it: its share of the first
    # table's score, after the rerank's adjustments for what was chosen, so that its score over
    # the first's reads as the share its reason gives; best first by that.
    passed = [
        TableChoice(name=p.candidate.table, score=round(p.share * top, 5),
                    reasons=[p.why, *counted(p.candidate.reasons)], left_out=p.cause)
        for p in sorted(left_out, key=lambda p: -p.share)
        if p.candidate.table not in tables
    ]  # fmt: skip
    return ChosenTables(choices, paths, passed)


def table_description(graph: SchemaGraph, meta: Metadata | None, name: str) -> str:
    """What the team's metadata says the table is, else its database comment (short)."""
    described = meta.table_meta(name) if meta is not None else None
    table = graph.table(name)
    return short_description(
        (described.description if described else None) or (table.comment if table else None)
    )


def connect(
    graph: SchemaGraph, chosen: list[str]
) -> tuple[list[str], list[dict[str, Any]], dict[str, list[str]]]:
    """The tables with the bridges that join them, the join paths (with each kept table's
    joins to itself: a manager's `mgr_id` → `emp_id` is how "each employee's manager" is
    asked), and a note for each table kept without a known join to the first."""
    tables, paths, notes = _connect(graph, chosen)
    return tables, with_self_joins(graph, tables, paths), notes


def with_self_joins(
    graph: SchemaGraph, tables: list[str], paths: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The join paths with the self-references of `tables` added to the first (or as a path
    of their own when the tables join nothing else). A self-join changes no grain."""
    kept = set(tables)
    own = [
        PathEdge.of(e)
        for e in graph.edges
        if e.via is None and e.child_table == e.parent_table and e.child_table in kept
    ]
    if not own:
        return paths
    if paths:
        first = JoinPath.model_validate(paths[0])
        # A self-joined table the tree does not hold (kept without a join to the first) is a
        # path of its own, not a second grain of the tree.
        apart = [e for e in own if e.left not in first.tables]
        own = [e for e in own if e.left in first.tables]
    else:
        first, apart = JoinPath(tables=list(dict.fromkeys(e.left for e in own))), []
    first.edges = [*first.edges, *own]
    first.grain, first.warnings = grain_and_warnings(first.tables, first.edges)
    alone = []
    for edge in apart:
        grain, warnings = grain_and_warnings([edge.left], [edge])
        alone.append(JoinPath(tables=[edge.left], edges=[edge], grain=grain, warnings=warnings))
    return [first.model_dump(), *paths[1:], *(p.model_dump() for p in alone)]


def _connect(
    graph: SchemaGraph, chosen: list[str]
) -> tuple[list[str], list[dict[str, Any]], dict[str, list[str]]]:
    """`connect` without the self-joins.

    When the chosen tables do not all connect: a table the graph joins to other tables, but not
    to the best one, is about something else and is dropped; a table with no known joins at
    all (a catalog without keys) is kept and flagged, since absence of evidence is not
    evidence of unrelatedness."""
    if len(chosen) <= 1:
        return list(chosen), [], {}
    try:
        tree = connecting_tree(graph, chosen)
        return list(dict.fromkeys([*chosen, *tree.tables])), [tree.model_dump()], {}
    except NoJoinPathError:
        pass
    linked = {e.child_table for e in graph.edges} | {e.parent_table for e in graph.edges}
    kept = [chosen[0]]
    notes: dict[str, list[str]] = {}
    for name in chosen[1:]:
        if _joinable(graph, chosen[0], name):
            kept.append(name)
        elif name not in linked or chosen[0] not in linked:
            kept.append(name)
            notes.setdefault(name, []).append(f"no known join path to {chosen[0]}")
    joined = [t for t in kept if t == kept[0] or _joinable(graph, kept[0], t)]
    if len(joined) > 1:
        tree = connecting_tree(graph, joined)
        return list(dict.fromkeys([*kept, *tree.tables])), [tree.model_dump()], notes
    return kept, [], notes


def _joinable(graph: SchemaGraph, first: str, second: str) -> bool:
    try:
        connecting_tree(graph, [first, second])
        return True
    except NoJoinPathError:
        return False


def counted(reasons: list[str]) -> list[str]:
    """Each reason once, in first-seen order, with how often it came (`path document matched
    (12 times)`): a table named by many path documents should not list them one by one."""
    counts = Counter(reasons)
    return [r if counts[r] == 1 else f"{r} ({counts[r]} times)" for r in dict.fromkeys(reasons)]
