"""The context engine's settings: the tuned constants in one frozen object, and the options of
one call.

`RETRIEVAL` holds every number retrieval, the database vote, the structural rerank and the
index's search were tuned with, each with what measured it (the commit that set it, the figure
it quotes). The figures are Spider/BIRD dev and Spider 2.0-lite strict table recall unless said
otherwise; "Union" means every database of the set pooled. The code reads these fields, never a
module constant, so that a sweep is `replace(RETRIEVAL, …)` passed where a function takes
`tuning`. DESIGN.md warns that these figures were reached on the questions that score them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from schemawise.retrieve.relevance import DEFAULT_FLOOR, RelevanceFloor

if TYPE_CHECKING:  # types only: the rerank and pruning modules read RETRIEVAL themselves
    from schemawise.prune.columns import ColumnFilter
    from schemawise.rank.structural import Ranker
    from schemawise.retrieve.source_choice import SourcePicker


@dataclass(frozen=True)
class RetrievalSettings:
    # --- Table evidence (retrieve/evidence.py)
    # A column hit adding no new column or word counts this much. 7c1b8c5: SpiderUnion .979→.982
    repeated_column: float = 0.5

    # --- The schema's own lexicon (retrieve/lexicon.py)
    # An unseen question word is read as the nearest schema word at least this similar (cosine,
    # wordllama). Swept 0.0-0.7 on the even half of bench/synonyms_spider.jsonl: pooled synonym
    # recall .600 -> .686 (odd, held out: .565 -> .623); SpiderUnion even/odd .9923 -> .9942 /
    # .9923, BirdUnion .9726 -> .9739 / .9765 -> .9804.
    lexicon_similarity: float = 0.15

    # --- Which database (retrieve/source_choice.py), each vote normalised by the best one's
    # Best document scores summed per database. Not measured separately (5acf6a3).
    top_hits: int = 2
    # Its two best tables' scores. a2a2e70: BirdUnion right db .943→.967, SpiderUnion .899→.888
    table_vote: float = 0.25
    # Share of the question's rare words it holds. 81c1e70: SpiderUnion .881→.947, Bird .859→.870
    coverage_vote: float = 0.5
    # Tables the question names. 4fbce60: SpiderUnion .985→.987, BirdUnion .962→.965; 0.2 worse
    named_vote: float = 0.1
    # Column names written out. 3f14fd7: BirdUnion .967→.971, BIRD given .979→.980, Spider same
    written_vote: float = 0.3
    # How near its lexicon comes to the words no schema uses (with the lexicon on only). Swept
    # 0-1 on the even halves (2026-12-05): synonyms pooled .686 -> .757 at .25 (same at .5),
    # SpiderUnion .9942 same, BirdUnion .9739 same (.5: .9687). Odd, held out: synonyms
    # .623 -> .681, SpiderUnion .9923 same, BirdUnion .9804 -> .9830. Nearness measured
    # against chance since 2026-12-07 (not re-swept): warehouses pooled .724 -> .810.
    lexicon_vote: float = 0.25
    # How near the question comes, by the word reader, to its nearest table card (card_reading
    # .py; with the lexicon on and a reader installed). Replayed on the logged votes of the
    # even halves of synonyms, warehouses, held-out, SpiderUnion and BirdUnion pooled
    # (2026-12-07): 0.05-0.1 +2, 0.2 +4 (all synonyms), 0.3 +3, 0.5 -2. Odd, held out, at
    # 0.2: synonyms +2, BirdUnion +1, warehouses -1. docs/benchmarks.md "Table cards read".
    card_vote: float = 0.2
    # A runner-up this near the chosen database's vote is a close call the assistant names
    # (`close_calls`). Chosen on the even halves of SpiderUnion, BirdUnion, synonyms and the
    # warehouses pooled (2026-12-06): 0.9 flags 3.1% of right choices and names the right
    # database for 16 of 31 wrong ones (0.85: 5.3%, 20; 0.95: 1.1%, 5). Odd: 2.9%, 11 of 32.
    close_call: float = 0.9
    # With a picker (ContextSettings.source_picker: `ask --pick-source`), the runners-up at
    # least this near the chosen database's vote (up to `picker_candidates` in all) are put to
    # it with the chosen one. Set before any run from the share of questions it would put
    # (synonyms 62%, SpiderUnion 27%); with the local 1.5B model, even halves: synonyms pooled
    # 52 -> 57 of 70, SpiderUnion 515 -> 499 of 517; replayed at 0.9: +5 -2, -5 (2026-12-07,
    # docs/benchmarks.md "The model picks the database"). Hence off by default.
    picker_window: float = 0.7
    picker_candidates: int = 3

    # --- Structural rerank (rank/structural.py): factors on a candidate's score
    # × a deprecated table. Not measured separately (3392e56: "modest weights", no figure).
    deprecated: float = 0.5
    # × a certified table. Not measured separately (3392e56).
    certified: float = 1.1
    # × a table joining a chosen one directly. Not measured separately (3392e56).
    joins_chosen: float = 1.15
    # × a table no evidence-backed join reaches from the chosen. Not measured separately (3392e56).
    unjoinable: float = 0.7
    # × a table adding no question word the chosen lack. Not measured separately (3392e56).
    redundant: float = 0.8
    # + per new question word (≤ 3). 7ba2ab3: Spider 2.0 .805→.826; swept .05–.5, .2 best (.832)
    new_words: float = 0.2
    # × a same-named copy of a chosen table in another schema. 4c3574a: +1 of 149 Spider 2.0
    duplicate: float = 0.5
    # + × query-log co-use share with the chosen. Not measured separately (no log in the sets).
    affinity: float = 0.3
    # + per question word a table covers (≤ 3). 60db87e: Spider 2.0 .678→.698, SpiderUnion −.002
    coverage: float = 0.05
    # + up to this when the question names the table's schema. ae51818: Spider 2.0 .752→.765
    schema_named: float = 0.5
    # Share of the first a wordless table needs, short question. 2df960e: Spider 3.35→2.76 tables
    wordless_floor: float = 0.8
    # … less this per question word. 2df960e (with the above): SpiderUnion .987→.989
    wordless_floor_per_word: float = 0.06
    # … never below this. 5cc5135: BIRD given .980→.983 (3.89 tables), BirdUnion .971→.973
    wordless_minimum: float = 0.4

    # --- The index's search (index/store.py)
    # Rewritten documents before a vacuum. 22d2abb with the cap below: p95 335 ms before; not swept
    tidy_after: int = 2000
    # A word in more of the documents searched is dropped. 477a3ab: context-speed p95 238 ms
    common_share: float = 0.2
    # … but never one in this few. cc37e66: BM25 baseline k=10 had fallen to 0.18; context same
    common_at_least: int = 3
    # Lexical matches at most (common words go first). 22d2abb: see tidy_after; bound not swept
    max_lexical_matches: int = 5000
    # A word this long matches the words it begins (citizen…). Not measured separately (111b56f).
    prefix_length: int = 5
    # The sources searched hold at most this many documents: their nearest documents are found
    # exactly, not through the approximate graph index, whose answer for one database shifts
    # with what else is indexed. A bound on the scan's cost, not swept: 16,000 documents took
    # about 18 ms (docs/benchmarks.md, "Exact search"); a Spider database has 30–300.
    exact_search_documents: int = 5_000


RETRIEVAL = RetrievalSettings()


@dataclass
class ContextSettings:
    """The options of one `build_context` call (its per-question knobs, not tuned constants)."""

    candidates: int = 150
    max_tables: int = 6
    # How many of the candidate tables left out the pack names (`passed_over`), best first.
    passed_over: int = 5
    # A table joins the pack when its score is at least this share of the best table's.
    relative_cutoff: float = 0.35
    column_weight: float = 0.9
    # Share of a path, example or glossary document's score each table it names receives.
    multi_table_weight: float = 0.3
    # How many of those documents count for one table, best first (None: all of them).
    shared_documents: int | None = None
    name_bonus: float = 0.02
    # Added to a table for each of its columns written out in the question or evidence as an
    # identifier (`convertedManaCost`, `statusId`), split among the tables having that column.
    mention_bonus: float = 0.0
    mention_holders: int = 2
    budget: int | None = None  # tokens (retrieve/budget.py)
    # An optional second opinion on the chosen tables (an LLM, a cross-encoder); see rank/.
    ranker: Ranker | None = None
    # An optional cheap pass over the pruned columns (an LLM); see prune/.
    column_filter: ColumnFilter | None = None
    # An optional second opinion on the database when several come close (an LLM); see
    # retrieve/source_choice.py `second_opinion`.
    source_picker: SourcePicker | None = None
    # Below it the pack is empty and says why: nothing in the index is about the question
    # (retrieve/relevance.py). None: always the nearest tables, however far.
    relevance_floor: RelevanceFloor | None = DEFAULT_FLOOR
    # Read a question word the index never saw as the nearest schema word, and prefer the
    # database whose words come nearest (retrieve/lexicon.py) and, with the word reader, whose
    # table cards read nearest (retrieve/card_reading.py). None: when more than one database
    # is searched, with the default embedder (the one it was measured with). There it wins
    # synonym and unseen-warehouse questions (pooled .547 -> .712, .776 -> .810), SpiderUnion
    # +3 and BirdUnion +1 net, but lets more off-topic questions through (SpiderUnion .575 ->
    # .45 empty, BirdUnion .475 -> .35); with one database the readings cost Spider 2.0 and
    # synonym questions and there is no database to choose (docs/benchmarks.md, "The lexicon
    # where there is a choice").
    lexicon: bool | None = None
