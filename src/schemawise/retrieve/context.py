"""The context pack: the smallest set of tables, join paths and columns a SQL writer needs."""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import psycopg
from pydantic import BaseModel, Field

from schemawise.enrich.metadata import Metadata
from schemawise.errors import NoJoinPathError, SchemawiseError
from schemawise.graph.families import collapsed
from schemawise.graph.model import SchemaGraph
from schemawise.graph.naming import singular, singular_words, split_identifier, stem
from schemawise.graph.paths import connecting_tree
from schemawise.index import store
from schemawise.index.cards import TABLE_SEPARATOR
from schemawise.index.embed import Embedder
from schemawise.prune.columns import ColumnFilter, ColumnPick, PruneInput, join_keys_of, prune
from schemawise.rank.structural import (
    Candidate,
    Ranker,
    RankSettings,
    apply_metadata,
    apply_schema_mentions,
    choose,
)
from schemawise.retrieve.implied import with_implied_words
from schemawise.retrieve.values import render_values, shown_values

_STOP = frozenset(
    {
        "the", "a", "an", "of", "in", "on", "for", "to", "and", "or", "by", "with", "what",
        "which", "who", "how", "many", "much", "is", "are", "was", "were", "show", "list",
        "find", "give", "all", "each", "per", "from", "that", "this", "those", "these",
        "their", "its", "be", "has", "have", "do", "does", "name", "names", "number",
        "count",
    }
)  # fmt: skip

# Words that ask for an aggregate: a column is rarely named so ("the average weight" is about
# weight, not about a stadium's `Average` column), so they tell databases apart by accident.
_AGGREGATING = frozenset(
    {"average", "avg", "total", "sum", "maximum", "minimum", "max", "min", "mean"}
)


SEARCHED_KINDS = ("table", "column", "values", "path", "example", "glossary", "source")

# How many of a database's best-matching documents decide which database a question is about.
TOP_HITS = 2


class TableChoice(BaseModel):
    name: str
    score: float
    reasons: list[str] = Field(default_factory=list)


class ColumnChoice(BaseModel):
    table: str
    name: str
    tier: int  # 1 relevant, 2 potentially relevant (keys, enums)
    reason: str = ""
    # A few values the column holds, as written in the data (profiles), the question's first.
    values: list[str] = Field(default_factory=list)


class ContextPack(BaseModel):
    question: str
    source: str | None = None
    schema_version: str = ""
    tables: list[TableChoice] = Field(default_factory=list)
    columns: list[ColumnChoice] = Field(default_factory=list)
    join_paths: list[dict[str, Any]] = Field(default_factory=list)
    definitions: list[str] = Field(default_factory=list)
    value_mappings: dict[str, Any] = Field(default_factory=dict)
    examples: list[str] = Field(default_factory=list)
    text: str = ""
    tokens: int = 0


@dataclass
class ContextSettings:
    candidates: int = 150
    max_tables: int = 6
    # A table joins the pack when its score is at least this share of the best table's.
    relative_cutoff: float = 0.35
    column_weight: float = 0.9
    # Share of a path, example or glossary document's score each table it names receives.
    multi_table_weight: float = 0.3
    name_bonus: float = 0.02
    # Added to a table for each of its columns written out in the question or evidence as an
    # identifier (`convertedManaCost`, `statusId`), split among the tables having that column.
    mention_bonus: float = 0.0
    mention_holders: int = 2
    budget: int | None = None  # tokens
    # An optional second opinion on the chosen tables (an LLM, a cross-encoder); see rank/.
    ranker: Ranker | None = None
    # An optional cheap pass over the pruned columns (an LLM); see prune/.
    column_filter: ColumnFilter | None = None


def question_words(text: str) -> set[str]:
    return {
        singular(w) for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP and len(w) > 1
    }


@lru_cache(maxsize=65536)
def _name_words(name: str) -> frozenset[str]:
    return frozenset(_words(name.rsplit(".", 1)[-1]))


def _words(identifier: str) -> set[str]:
    return set(singular_words(identifier))


def _terms(
    graph: SchemaGraph, meta: Metadata | None, table: str, asked: set[str], matched: list[str]
) -> set[str]:
    """The question words a table accounts for: words of its name, of its matched columns
    other than keys (a `shop_id` column names the shop table, not this one), and of the values
    its columns hold (a question about cats needs the table whose `pet_type` says `cat`)."""
    keys = graph.cached("key_columns", _key_columns)
    words = set(_name_words(table))
    for column in matched:
        if (table, column) not in keys:
            words |= _words(column)
    if meta is not None and meta.profiles:
        found = graph.table(table)
        for held in found.columns if found else []:
            profile = meta.profiles.get(f"{table}.{held.name}".lower())
            if profile is not None:
                for value in profile.values or [*profile.samples, *profile.seen]:
                    words |= question_words(value) & asked
    stems = {stem(w) for w in words}
    return {w for w in asked if stem(w) in stems}


def _key_columns(graph: SchemaGraph) -> set[tuple[str, str]]:
    keys = {(t.name, k) for t in graph.tables for k in t.primary_key}
    keys |= {(e.child_table, c) for e in graph.edges for c in e.child_columns}
    return keys


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_CAMEL_CASE = re.compile(r"[a-z][A-Z]")
_LETTER_DIGIT = re.compile(r"[A-Za-z][0-9]")


def _identifiers(text: str) -> set[str]:
    """Words of the text that could be identifiers, lower case (`convertedManaCost`)."""
    return {w.lower() for w in re.findall(_IDENTIFIER, text)}


def written_names(text: str, evidence: str) -> set[str]:
    """The names written out, lower case: words of the text that read as identifiers
    (`first_name`, `convertedManaCost`), and any word of the evidence, which is there to say
    what the question's words mean in the schema ("website refers to url"). A plain word of
    the question (`missing`, `date`) is prose, whatever column shares its name."""
    words = re.findall(_IDENTIFIER, text)
    return {w.lower() for w in words if _looks_like_identifier(w)} | _identifiers(evidence)


def _column_holders(graph: SchemaGraph) -> dict[str, list[str]]:
    """Column name (lower case) → the tables having a column of that name."""
    holders: dict[str, list[str]] = defaultdict(list)
    for table in graph.tables:
        for column in table.columns:
            holders[column.name.lower()].append(table.name)
    return dict(holders)


@dataclass
class _TableEvidence:
    """Per (source, table): its score (its card's score, a share of its best columns' and of
    the path, example and glossary documents naming it, bonuses), why, and matched columns."""

    scores: dict[tuple[str, str], float]
    reasons: dict[tuple[str, str], list[str]]
    columns: dict[tuple[str, str], list[tuple[str, float]]]
    pinned: set[tuple[str, str]]  # a column of it is written out in the question

    @classmethod
    def of(
        cls,
        hits: list[store.Hit],
        graphs: dict[str, SchemaGraph],
        sources: list[str] | None,
        spelled: set[str],  # names written out (written_names)
        asked: set[str],
        settings: ContextSettings,
    ) -> _TableEvidence:
        scores: dict[tuple[str, str], float] = defaultdict(float)
        reasons: dict[tuple[str, str], list[str]] = defaultdict(list)
        column_hits: dict[tuple[str, str], list[tuple[str, float]]] = defaultdict(list)
        for hit in hits:
            key = (hit.source, hit.table)
            if hit.kind == "table":
                scores[key] += hit.score
                reasons[key].append("table card matched")
            elif hit.kind in ("column", "values") and hit.column:
                column_hits[key].append((hit.column, hit.score))
            elif hit.kind in ("path", "example", "glossary"):
                # A document about several tables lends each of them a share of its score.
                for named in hit.table.split(TABLE_SEPARATOR):
                    scores[(hit.source, named)] += settings.multi_table_weight * hit.score
                    reasons[(hit.source, named)].append(f"{hit.kind} document matched")
            # A source card votes for its database (see _choose_source) and names no table.
        for key, cols in column_hits.items():
            scores[key] += settings.column_weight * _best_distinct(cols, asked)
            # A column matched by its document and by its values document is named once.
            best = list(dict.fromkeys(c for c, _ in cols))[:3]
            reasons[key].append(f"columns matched: {', '.join(best)}")
        pinned: set[tuple[str, str]] = set()
        for source, graph in graphs.items():
            if sources and source not in sources:
                continue
            for table in graph.tables:
                if _names_table(table.name, asked):
                    scores[(source, table.name)] += settings.name_bonus
                    reasons[(source, table.name)].append("named in the question")
            holders_of = graph.cached("column_holders", _column_holders) if spelled else {}
            for column in spelled & holders_of.keys():
                holders = holders_of[column]
                if len(holders) <= settings.mention_holders:
                    for holder in holders:
                        scores[(source, holder)] += settings.mention_bonus / len(holders)
                        pinned.add((source, holder))
                        reasons[(source, holder)].append(f"column {column} written out")
        return cls(scores, reasons, column_hits, pinned)


# A column hit that adds nothing new — the same column again (its values document), or only
# question words already matched by a better column of the table (`tokyo_wind` after
# `reunion_wind`) — counts this much: a table with ten agencies' wind columns is not three
# times about wind.
REPEATED_COLUMN = 0.5


def _best_distinct(cols: list[tuple[str, float]], asked: set[str]) -> float:
    """The sum of a table's three best column hits, repeats discounted."""
    seen_columns: set[str] = set()
    seen_words: set[str] = set()
    adjusted = []
    for column, score in sorted(cols, key=lambda c: -c[1]):
        words = _words(column) & asked
        repeat = column in seen_columns or bool(words and words <= seen_words)
        adjusted.append(score * (REPEATED_COLUMN if repeat else 1.0))
        seen_columns.add(column)
        seen_words |= words
    return sum(sorted(adjusted, reverse=True)[:3])


def build_context(
    conn: psycopg.Connection[Any],
    question: str,
    graphs: dict[str, SchemaGraph],
    embedder: Embedder,
    *,
    evidence: str = "",
    sources: list[str] | None = None,
    settings: ContextSettings | None = None,
    metadata: dict[str, Metadata] | None = None,
) -> ContextPack:
    if not f"{question}{evidence}".strip():
        raise SchemawiseError(
            "The question is empty.", 'Ask one, e.g. schemawise context "How many orders shipped?"'
        )
    settings = settings or ContextSettings()
    # Retrieval sees one entry per sharded family, as the index does.
    graphs = {name: collapsed(graph) for name, graph in graphs.items()}
    text = f"{question} {evidence}".strip()
    vector = embedder.embed([text])[0]
    # Lexical matching also sees the words the question implies (`tallest` → height); the
    # embedding reads the question as written (adding them there measured slightly worse).
    searched = _with_split_identifiers(with_implied_words(text))
    # … and its adjacent words run together (`high schoolers` finds `Highschooler`).
    lexical = " ".join([searched, *_compounds(text)])
    hits = store.search(
        conn, lexical, vector, kinds=SEARCHED_KINDS, sources=sources,
        n=settings.candidates,
    )  # fmt: skip
    # Only sources whose graph is at hand can be connected and pruned (the index may also hold
    # documents of other runs, such as benchmark catalogs).
    hits = [h for h in hits if h.source in graphs]
    asked = question_words(searched)
    spelled = written_names(text, evidence)
    evidence_of = _TableEvidence.of(hits, graphs, sources, spelled, asked, settings)
    scores, reasons, column_hits = evidence_of.scores, evidence_of.reasons, evidence_of.columns
    if not scores:
        return ContextPack(question=question)
    # One database per question: the source whose documents match the question best overall
    # (every hit votes, so that many weak matches in one database beat one strong elsewhere).
    by_source: dict[str, list[float]] = defaultdict(list)
    for hit in hits:
        by_source[hit.source].append(hit.score)
    if not by_source:  # nothing current matched: an empty pack, not a guess
        return ContextPack(question=question)
    found = (
        store.words_found(conn, _with_compounds(searched), list(by_source))
        if len(by_source) > 1
        else {}
    )
    in_scope = len(sources) if sources else len(graphs)
    named = {s: _tables_named(graphs[s], asked) for s in by_source} if len(by_source) > 1 else {}
    written = _columns_written(graphs, sources, text, evidence) if len(by_source) > 1 else {}
    source = _choose_source(
        by_source, scores, _coverage(found, in_scope), named, _coverage(written, in_scope)
    )
    if len(by_source) > 1:
        # The pooled search shared its candidates among the databases; the chosen one's own
        # search ranks all of its documents (as when the database is given).
        hits = store.search(
            conn, lexical, vector, kinds=SEARCHED_KINDS, sources=[source], n=settings.candidates
        )
        evidence_of = _TableEvidence.of(hits, graphs, [source], spelled, asked, settings)
        scores, reasons, column_hits = evidence_of.scores, evidence_of.reasons, evidence_of.columns
    pinned = evidence_of.pinned
    graph = graphs[source]
    meta = (metadata or {}).get(source)
    candidates = [
        Candidate(
            table=table,
            score=score,
            terms=_terms(graph, meta, table, asked, [c for c, _ in column_hits.get(key, [])]),
            reasons=reasons[key],
            pinned=key in pinned,
        )
        for key, score in scores.items()
        if key[0] == source
        for table in [key[1]]
    ]
    apply_metadata(candidates, meta)
    apply_schema_mentions(candidates, asked)
    ranking = RankSettings(
        max_tables=settings.max_tables,
        relative_cutoff=settings.relative_cutoff,
        question_words=len(asked),
    )
    picked = choose(candidates, graph, ranking, meta.usage if meta else None)
    if settings.ranker is not None:
        picked = settings.ranker(question, picked) or picked[:1]
    chosen = [c.table for c in picked]
    ranked = [(c.table, c.score) for c in picked]
    pack = ContextPack(question=question, source=source, schema_version=graph.version)
    paths: list[dict[str, Any]] = []
    tables = list(chosen)
    if len(chosen) > 1:
        try:
            tree = connecting_tree(graph, chosen)
            tables = list(dict.fromkeys([*chosen, *tree.tables]))
            paths.append(tree.model_dump())
        except NoJoinPathError:
            tables, paths = _joinable_part(graph, chosen, reasons, source)
    # A bridge the rerank did not pick keeps its retrieval score: 0 only if nothing matched it.
    score_of = {name: scores.get((source, name), 0.0) for name in tables} | dict(ranked)
    for name in tables:
        why = _counted(reasons.get((source, name), [])) or ["joins the chosen tables"]
        pack.tables.append(
            TableChoice(name=name, score=round(score_of.get(name, 0.0), 5), reasons=why)
        )
    pack.join_paths = paths
    retrieved = {
        name: [c for c, _ in sorted(column_hits.get((source, name), []), key=lambda x: -x[1])]
        for name in tables
    }
    join_keys = join_keys_of(paths)
    picks = prune(PruneInput(graph, tables, text, asked, retrieved, join_keys, meta))
    if settings.column_filter is not None:
        # Keys stay whatever the filter says: without them the joins cannot be written.
        keys = join_keys | {
            (t.name, k) for t in graph.tables if t.name in tables for k in t.primary_key
        }
        kept = settings.column_filter(question, picks)
        picks = [p for p in picks if p in kept or (p.table, p.name) in keys]
    pack.columns = [_column_choice(p, graph, meta, text) for p in picks]
    if metadata and source in metadata:
        _add_metadata(pack, metadata[source], asked)
    pack.text = render(pack, graph)
    pack.tokens = count_tokens(pack.text)
    if settings.budget is not None:
        fit_budget(pack, graph, settings.budget)
    if sum(len(t.columns) for t in graph.tables) <= 300 and len(graph.tables) <= 30:
        pack.definitions.append(
            f"{source} is small ({len(graph.tables)} tables): sending it whole is an option."
        )
    return pack


# Weight of the table evidence against the raw hits when choosing a database (measured on
# Spider and BIRD dev with every database pooled: docs/benchmarks.md).
TABLE_VOTE = 0.25


# Weight of vocabulary coverage (the share of the question's distinctive words a database has
# anywhere: names, descriptions, values) against the raw hits.
COVERAGE_VOTE = 0.5

# Weight of the number of tables the question names (every word of the name in the question:
# `singers` and `song` name two tables of a singer/song database, one of a concert database
# whose singer table has a song_name column), normalised by the most any database has.
NAMED_VOTE = 0.1


# Weight of the column names written out in the question or evidence (`first_name`,
# `date_received`, `url`), each weighted by how few databases have a column of that name.
WRITTEN_VOTE = 0.3


def _columns_written(
    graphs: dict[str, SchemaGraph], sources: list[str] | None, text: str, evidence: str
) -> dict[str, set[str]]:
    """Source → the column names written out (see written_names) that it has."""
    spelled = written_names(text, evidence)
    return {
        name: found
        for name, graph in graphs.items()
        if not sources or name in sources
        for found in [spelled & graph.cached("column_holders", _column_holders).keys()]
        if found
    }


def _with_split_identifiers(text: str) -> str:
    """The text followed by the words of its camelCase identifiers (`statusID` → status id),
    which would otherwise stay one word."""
    camel = [w for w in re.findall(_IDENTIFIER, text) if _CAMEL_CASE.search(w)]
    split = [" ".join(split_identifier(w)) for w in dict.fromkeys(camel)]
    return " ".join([text, *split]) if split else text


def _looks_like_identifier(word: str) -> bool:
    """`first_name`, `convertedManaCost`, `A11`: not a word of prose."""
    return "_" in word.strip("_") or bool(_CAMEL_CASE.search(word) or _LETTER_DIGIT.search(word))


def _column_choice(
    pick: ColumnPick, graph: SchemaGraph, meta: Metadata | None, text: str
) -> ColumnChoice:
    table = graph.table(pick.table)
    column = table.column(pick.name) if table else None
    profile = meta.profiles.get(f"{pick.table}.{pick.name}".lower()) if meta else None
    return ColumnChoice(
        table=pick.table, name=pick.name, tier=pick.tier, reason=pick.why,
        values=shown_values(profile, column.type if column else "", text),
    )  # fmt: skip


def _counted(reasons: list[str]) -> list[str]:
    """Each reason once, in first-seen order, with how often it came (`path document matched
    (12 times)`): a table named by many path documents should not list them one by one."""
    counts = Counter(reasons)
    return [r if counts[r] == 1 else f"{r} ({counts[r]} times)" for r in dict.fromkeys(reasons)]


def _names_table(name: str, asked: set[str]) -> bool:
    """Every word of the table's name is in the question."""
    words = _name_words(name)
    return bool(words) and words <= asked


def _tables_named(graph: SchemaGraph, asked: set[str]) -> int:
    """How many distinct table names the question names outright."""
    return len({_name_words(t.name) for t in graph.tables if _names_table(t.name, asked)})


def _content_words(text: str) -> list[str]:
    """The text's words, not the words of asking (count, number, name, show) nor of
    aggregating (average, total, maximum)."""
    # Numbers are left out too: in a question they are mostly bounds ("between 5000 and
    # 10000", "at least 4"), and some numeric value somewhere in every database matches them.
    return [
        t
        for t in re.findall(r"[a-z0-9]+", text.lower())
        if t not in _STOP and singular(t) not in _STOP and not t.isdigit() and t not in _AGGREGATING
    ]


def _compounds(text: str) -> list[str]:
    """Each pair of adjacent content words written as one (`high school` → highschool), since
    identifiers often run words together (`Highschooler`)."""
    tokens = _content_words(text)
    return [a + b for a, b in itertools.pairwise(tokens) if len(a + b) >= 6]


def _with_compounds(text: str) -> str:
    """The text's content words plus their compounds (see `_compounds`)."""
    return " ".join([*_content_words(text), *_compounds(text)])


def _coverage(found: dict[str, set[str]], in_scope: int) -> dict[str, float]:
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


def _choose_source(
    by_source: dict[str, list[float]],
    scores: dict[tuple[str, str], float],
    coverage: dict[str, float] | None = None,
    named: dict[str, int] | None = None,
    written: dict[str, float] | None = None,
) -> str:
    """The database a question is about: its best TOP_HITS document scores (many matching
    documents), a share of its best two tables' scores (cards, columns and paths agreeing on
    the same tables), how much of the question's vocabulary it has, and how many of its tables
    the question names, each normalised by the best database's."""
    tables: dict[str, list[float]] = defaultdict(list)
    for (src, _), score in scores.items():
        tables[src].append(score)
    hits = {s: sum(sorted(v, reverse=True)[:TOP_HITS]) for s, v in by_source.items()}
    agreed = {s: sum(sorted(tables.get(s, [0.0]), reverse=True)[:2]) for s in by_source}
    covered = coverage or {}
    top_hits, top_tables = max(hits.values()) or 1.0, max(agreed.values()) or 1.0
    top_covered = max(covered.values(), default=0.0) or 1.0
    named = named or {}
    top_named = max(named.values(), default=0) or 1
    written = written or {}
    top_written = max(written.values(), default=0.0) or 1.0
    return max(
        sorted(by_source),
        key=lambda s: (
            hits[s] / top_hits
            + TABLE_VOTE * agreed[s] / top_tables
            + COVERAGE_VOTE * covered.get(s, 0.0) / top_covered
            + NAMED_VOTE * named.get(s, 0) / top_named
            + WRITTEN_VOTE * written.get(s, 0.0) / top_written
        ),
    )


def _add_metadata(pack: ContextPack, meta: Metadata, asked: set[str]) -> None:
    """Value meanings of the chosen columns, the definitions and jargon the question touches,
    and the closest example questions."""
    chosen = {t.name for t in pack.tables}
    for column in pack.columns:
        table_meta = meta.table_meta(column.table)
        column_meta = table_meta.columns.get(column.name) if table_meta else None
        if column_meta and column_meta.values:
            pack.value_mappings[f"{column.table}.{column.name}"] = column_meta.values
    bare = {name.rsplit(".", 1)[-1].lower() for name in chosen}
    for definition in meta.definitions:
        words = question_words(f"{definition.name} {definition.text}")
        named = bool(question_words(definition.name) & asked)
        about_chosen = any(b in definition.text.lower() for b in bare)
        if named or about_chosen or len(words & asked) >= 2:
            pack.definitions.append(f"{definition.name}: {definition.text}")
    for term, meaning in meta.jargon.items():
        if question_words(term) & asked:
            pack.definitions.append(f"{term}: {meaning}")
    ranked = sorted(meta.examples, key=lambda e: -len(question_words(e.question) & asked))
    for example in ranked[:2]:
        if len(question_words(example.question) & asked) >= 2:
            pack.examples.append(f"-- {example.question}\n{example.sql}")
    # Without a written example, real queries from the log over the chosen tables show how
    # the tables are used (joins, filters, the codes people write).
    if meta.usage is not None:
        for logged in meta.usage.examples_for(list(chosen))[: max(0, 2 - len(pack.examples))]:
            pack.examples.append(f"-- from the query log\n{logged.sql}")


def count_tokens(text: str) -> int:
    """About four characters a token, as for common BPE tokenizers on code and English."""
    return (len(text) + 3) // 4


def fit_budget(pack: ContextPack, graph: SchemaGraph, budget: int) -> None:
    """Keep the most valuable parts first: drop tier-2 columns, then the lowest-scoring
    tables' relevant columns, never the first table or its join keys."""
    while pack.tokens > budget:
        tier2 = [c for c in pack.columns if c.tier == 2]
        if tier2:
            pack.columns.remove(tier2[-1])
        else:
            first = pack.tables[0].name if pack.tables else ""
            rest = [c for c in pack.columns if c.table != first]
            if not rest:
                break
            pack.columns.remove(rest[-1])
        pack.text = render(pack, graph)
        pack.tokens = count_tokens(pack.text)


def _joinable(graph: SchemaGraph, first: str, second: str) -> bool:
    try:
        connecting_tree(graph, [first, second])
        return True
    except NoJoinPathError:
        return False


def _joinable_part(
    graph: SchemaGraph,
    chosen: list[str],
    reasons: dict[tuple[str, str], list[str]],
    source: str,
) -> tuple[list[str], list[dict[str, Any]]]:
    """When the chosen tables do not all connect: a table the graph joins to other tables, but
    not to the best one, is about something else and is dropped; a table with no known joins
    at all (a catalog without keys) is kept and flagged, since absence of evidence is not
    evidence of unrelatedness."""
    linked = {e.child_table for e in graph.edges} | {e.parent_table for e in graph.edges}
    kept = [chosen[0]]
    for name in chosen[1:]:
        if _joinable(graph, chosen[0], name):
            kept.append(name)
        elif name not in linked or chosen[0] not in linked:
            kept.append(name)
            reasons[(source, name)].append(f"no known join path to {chosen[0]}")
    joined = [t for t in kept if t == kept[0] or _joinable(graph, kept[0], t)]
    if len(joined) > 1:
        tree = connecting_tree(graph, joined)
        return list(dict.fromkeys([*kept, *tree.tables])), [tree.model_dump()]
    return kept, []


def render(pack: ContextPack, graph: SchemaGraph) -> str:
    lines = [f"-- definition: {d}" for d in pack.definitions]
    for mapped, values in pack.value_mappings.items():
        meaning = ", ".join(f"{k} = {v}" for k, v in values.items())
        lines.append(f"-- values of {mapped}: {meaning}")
    by_table: dict[str, list[ColumnChoice]] = defaultdict(list)
    for column in pack.columns:
        by_table[column.table].append(column)
    for choice in pack.tables:
        table = graph.table(choice.name)
        if table is None:
            continue
        cols = []
        chosen_columns = by_table.get(choice.name, [])
        shown = {c.name for c in chosen_columns}
        composite_key = len(table.primary_key) > 1 and set(table.primary_key) <= shown
        for number, column in enumerate(chosen_columns):
            col = table.column(column.name)
            last = number == len(chosen_columns) - 1 and not composite_key
            key = " PRIMARY KEY" if table.primary_key == [column.name] else ""
            notes = [n for n in (col.comment if col else "", render_values(column.values)) if n]
            comment = f" -- {'; '.join(notes)}" if notes else ""
            comma = "" if last else ","
            cols.append(f"  {column.name} {col.type if col else ''}{key}{comma}{comment}")
        if composite_key:
            cols.append(f"  PRIMARY KEY ({', '.join(table.primary_key)})")
        if table.shards:
            lines.append(
                f"-- {choice.name} stands for {len(table.shards)} sharded tables, "
                f"{table.shards[0]} … {table.shards[-1]}"
            )
        lines.append(f"CREATE TABLE {choice.name} (\n" + "\n".join(cols) + "\n);")
    lines.extend(f"-- example:\n{e}" for e in pack.examples)
    for path in pack.join_paths:
        for edge in path["edges"]:
            on = " AND ".join(f"{edge['left']}.{c} = {edge['right']}.{p}" for c, p in edge["on"])
            lines.append(f"-- join: {on} ({edge['cardinality']})")
        for warning in path.get("warnings", []):
            lines.append(f"-- warning: {warning}")
    return "\n".join(lines)
