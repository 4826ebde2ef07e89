"""Structural reranking: retrieval scores say which tables look like the question; the graph
and the metadata say which of them belong together. The weights are modest and documented
(docs/graph.md, "Ranking") so that retrieval still decides and structure breaks near-ties.

Every candidate first gains 5% per question word its name or matched columns cover (up to
three words): a table matching several of the question's words is likelier to be needed than
one matching a single word very well. A table whose schema the question names gains up to 50%
(`crypto_bitcoin.inputs` for a question about Bitcoin; see `apply_schema_mentions`).

Tables are chosen greedily, at most six. The best-scoring table is first; each next pick
maximises

    score × deprecation × certification × joinability × redundancy × duplicate × affinity

where
- deprecation: ×0.5 for a table marked deprecated (dbt, overlay);
- certification: ×1.1 for a certified table;
- joinability: ×1.15 when the table joins directly to a table already chosen; ×0.7 when the
  graph knows joins for both and no path connects them (about something else);
- redundancy: ×0.8 when the table accounts for no question word the chosen tables do not
  (three `transactions` tables from three schemas add little to one; a table matching no
  word at all, only by meaning, is weaker evidence too), and ×(1 + 0.2 × new words, up to
  three) when it accounts for words they do not (`stations` for "weather stations" beside a
  chosen `gsod` table, ahead of another table matching only `day` again);
- duplicate: ×0.5 when a chosen table has the same name in another schema (warehouses keep
  copies: `wdi.country_summary`, `health.country_summary`);
- affinity: ×(1 + 0.3 × share) where share is how often the query log used the table together
  with the chosen ones (0 without a log).
A pick stops when its adjusted score falls below `relative_cutoff` of the first table's;
pinned candidates (a column of theirs is written out in the question) then fill any room left.

A short question is about few things, so a table that matches none of its words (only by
meaning, or through join-path documents) must come closer to the first table the shorter the
question is: it needs `0.8 - 0.06 × words` of the first table's score, and never less than
0.4, words being the question's distinctive words. "How many documents do we have?" (one
word) keeps `Documents`, not also `Templates` and `Paragraphs`.

The numbers are fields of `RETRIEVAL` (retrieve/settings.py), each with what measured it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import networkx as nx

from schemawise.enrich.metadata import Metadata
from schemawise.enrich.usage import Usage
from schemawise.graph.model import SchemaGraph
from schemawise.graph.naming import singular_words
from schemawise.graph.paths import join_graph
from schemawise.retrieve.settings import RETRIEVAL, RetrievalSettings


@dataclass
class Candidate:
    table: str
    score: float
    terms: set[str] = field(default_factory=set)  # question words the table's documents match
    reasons: list[str] = field(default_factory=list)
    # Kept even below the cutoff while there is room (its column is written out in the text).
    pinned: bool = False


# An optional second opinion (an LLM, a cross-encoder): question and candidates in ranked
# order in, the candidates it keeps, in its order, out. Nothing here requires one.
Ranker = Callable[[str, list[Candidate]], list[Candidate]]


@dataclass
class RankSettings:
    max_tables: int = 6
    relative_cutoff: float = 0.35
    pool: int = 20  # candidates considered beyond the first
    question_words: int | None = None  # the question's distinctive words, when known


def wordless_floor(settings: RankSettings, tuning: RetrievalSettings = RETRIEVAL) -> float:
    """The share of the first table's score a table matching no question word needs."""
    if settings.question_words is None:
        return settings.relative_cutoff
    short = tuning.wordless_floor - tuning.wordless_floor_per_word * settings.question_words
    return max(settings.relative_cutoff, tuning.wordless_minimum, short)


def apply_metadata(
    candidates: list[Candidate], meta: Metadata | None, tuning: RetrievalSettings = RETRIEVAL
) -> None:
    """Deprecated tables lose half their score, certified ones gain a tenth."""
    if meta is None:
        return
    for candidate in candidates:
        table_meta = meta.table_meta(candidate.table)
        if table_meta is None:
            continue
        if table_meta.deprecated:
            candidate.score *= tuning.deprecated
            candidate.reasons.append(f"deprecated: {table_meta.deprecated}")
        if table_meta.certified:
            candidate.score *= tuning.certified
            candidate.reasons.append("certified")


def apply_schema_mentions(
    candidates: list[Candidate], asked: set[str], tuning: RetrievalSettings = RETRIEVAL
) -> None:
    """A table whose schema the question names gains up to 50%: `crypto_bitcoin.inputs` for
    a question about Bitcoin, not `crypto_dash.inputs`, whose columns read the same. Only a
    schema's distinctive words count (not `crypto`, which every schema of the source has),
    as a share of them (`bitcoin` names `crypto_bitcoin` more than `crypto_bitcoin_cash`), and
    none when another schema is named by more of the question's words. A set of words cannot
    tell "Ethereum against Ethereum Classic" from "Ethereum Classic": only the second schema is
    lifted then, and retrieval alone must bring the first."""
    schemas = {_schema(c.table) for c in candidates} - {""}
    if len(schemas) < 2:
        return
    words = {schema: _schema_words(schema) for schema in schemas}
    everywhere = set.intersection(*words.values())
    named_of = [(w - everywhere) & asked for w in words.values()]
    for candidate in candidates:
        own = words.get(_schema(candidate.table), set()) - everywhere
        named = own & asked
        # "Ethereum Classic" names `crypto_ethereum_classic` (both its words), not
        # `crypto_ethereum`, though each schema has all of its own words named: a schema whose
        # named words another schema's include and exceed is the less specific reading.
        if any(named < other for other in named_of):
            continue
        if named:
            candidate.score *= 1 + tuning.schema_named * len(named) / len(own)
            # The schema as written, not the words matched (`sale` of `sales`, singular).
            schema = candidate.table.rsplit(".", 1)[0]
            candidate.reasons.append(f"its schema is named: {schema}")


def _schema(table: str) -> str:
    return table.rsplit(".", 1)[0].lower() if "." in table else ""


def _schema_words(schema: str) -> set[str]:
    return set(singular_words(schema.rsplit(".", 1)[-1]))


def choose(
    candidates: list[Candidate],
    graph: SchemaGraph,
    settings: RankSettings | None = None,
    usage: Usage | None = None,
    tuning: RetrievalSettings = RETRIEVAL,
    passed_over: list[PassedOver] | None = None,
) -> list[Candidate]:
    """The tables of the pack, best first (see the module docstring for the rule).
    `passed_over`, when given, receives the candidates left out, best first, each with why."""
    settings = settings or RankSettings()
    if tuning.coverage:
        for candidate in candidates:
            candidate.score *= 1 + tuning.coverage * min(len(candidate.terms), 3)
    pool = sorted(candidates, key=lambda c: (-c.score, c.table))[: settings.pool + 1]
    if not pool:
        return []
    joins = graph.cached("join_graph", join_graph)
    components = graph.cached("join_components", _components)
    chosen = [pool[0]]
    covered = set(pool[0].terms)
    floor = settings.relative_cutoff * pool[0].score
    wordless = wordless_floor(settings, tuning) * pool[0].score
    rest = pool[1:]
    while rest and len(chosen) < settings.max_tables:
        ranked = sorted(
            ((*_adjusted(c, chosen, covered, joins, components, usage, tuning), c) for c in rest),
            key=lambda item: -item[0],
        )
        pick = next(
            (
                (candidate, why)
                for adjusted, why, candidate in ranked
                if adjusted >= floor and (candidate.terms or adjusted >= wordless)
            ),
            None,
        )
        if pick is None:
            break
        candidate, why = pick
        candidate.reasons.extend(why)
        chosen.append(candidate)
        covered |= candidate.terms
        rest.remove(candidate)
    for candidate in rest:
        if candidate.pinned and len(chosen) < settings.max_tables:
            chosen.append(candidate)
    if passed_over is not None:
        first = pool[0].score or 1.0
        left = [c for c in rest if c not in chosen]
        adjusted = {c.table: _adjusted(c, chosen, covered, joins, components, usage, tuning)[0]
                    for c in left}  # fmt: skip
        for candidate in sorted(left, key=lambda c: (-adjusted[c.table], c.table)):
            share = adjusted[candidate.table] / first
            cause, said = _why_left_out(share, candidate, len(chosen), settings, wordless / first)
            passed_over.append(PassedOver(candidate, share, cause, said))
        weighed = settings.pool + 1
        for candidate in sorted(candidates, key=lambda c: (-c.score, c.table))[weighed:]:
            said = f"not among the {weighed} best-matching tables the rerank weighs"
            passed_over.append(PassedOver(candidate, candidate.score / first, "unweighed", said))
    return chosen


# Why a candidate table is not in the pack (`_why_left_out` here; `ranker` and `unjoined` are
# given by retrieve/tables.py): under the cut; matching no question word and under the higher
# bar that asks; over both but the pack full; not among the candidates weighed; dropped by the
# second opinion (ContextSettings.ranker); chosen but joined to other tables and not to the
# first (`connect`); or lifted over the cut only by a table pinned in after the choice ended.
LeftOut = Literal["cut", "full", "wordless", "unweighed", "ranker", "unjoined", "ended"]


@dataclass(frozen=True)
class PassedOver:
    """A candidate table the rerank left out: its score against the first table's (after the
    rerank's adjustments for what was chosen), why in a word (`LeftOut`) and
    in a sentence."""

    candidate: Candidate
    share: float
    cause: LeftOut
    why: str


def _under(share: float) -> str:
    """A share under a bar, rounded down: 0.349 under 0.35 reads 0.34, not 0.35."""
    # The epsilon: 0.29 * 100 is 28.999999999999996 in binary floating point.
    return f"{math.floor(share * 100 + 1e-9) / 100:.2f}"


def _why_left_out(
    share: float, candidate: Candidate, chosen: int, settings: RankSettings, wordless: float
) -> tuple[LeftOut, str]:
    """The first bar the candidate fails, in the order the choice applies them: the cut, the
    higher bar of a table matching no question word; only one that passes both was kept out by
    the cap."""
    if share < settings.relative_cutoff:
        return "cut", (
            f"scored {_under(share)} of the first table's score, under the cut of "
            f"{settings.relative_cutoff:.2f}"
        )
    if not candidate.terms and share < wordless:
        return "wordless", (
            f"matches no word of the question, and scored {_under(share)} of the first "
            f"table's score, under the {wordless:.2f} such a table needs"
        )
    if chosen >= settings.max_tables:
        return "full", (
            f"scored {share:.2f} of the first table's score, but the choice already held as "
            f"many tables as a pack may ({settings.max_tables})"
        )
    # A table pinned in after the choice ended can lift a neighbour over the cut it failed.
    return "ended", f"scored {share:.2f} of the first table's score when the choice ended"


def _adjusted(
    candidate: Candidate,
    chosen: list[Candidate],
    covered: set[str],
    joins: nx.Graph[str],
    components: dict[str, int],
    usage: Usage | None,
    tuning: RetrievalSettings,
) -> tuple[float, list[str]]:
    score = candidate.score
    why: list[str] = []
    name = candidate.table
    if name in joins and any(joins.has_edge(name, c.table) for c in chosen):
        score *= tuning.joins_chosen
        why.append("joins a chosen table")
    elif name in components and all(
        c.table in components and components[c.table] != components[name] for c in chosen
    ):
        score *= tuning.unjoinable
        why.append("no join path to the chosen tables")
    new = candidate.terms - covered
    if new:
        score *= 1 + tuning.new_words * min(len(new), 3)
    else:
        score *= tuning.redundant
    bare = name.rsplit(".", 1)[-1].lower()
    if any(c.table.rsplit(".", 1)[-1].lower() == bare for c in chosen):
        score *= tuning.duplicate
        why.append("a table of this name is already chosen")
    if usage is not None:
        share = usage.co_use_share(name, [c.table for c in chosen])
        if share > 0:
            score *= 1 + tuning.affinity * share
            why.append(f"used with the chosen tables in {share:.0%} of logged queries")
    return score, why


def _components(graph: SchemaGraph) -> dict[str, int]:
    """Table → its connected part of the graph of joins backed by evidence (declared, dbt,
    the query log, or a name confirmed on the data). Joins guessed from names alone are too
    incomplete for "no path" to mean "unrelated": tables they alone touch are left out."""
    trusted: nx.Graph[str] = nx.Graph()
    for edge in graph.edges:
        guessed = edge.source == "inferred_name" and edge.evidence.inclusion is None
        if edge.via is None and not guessed and edge.child_table != edge.parent_table:
            trusted.add_edge(edge.child_table, edge.parent_table)
    return {t: i for i, part in enumerate(nx.connected_components(trusted)) for t in part}
