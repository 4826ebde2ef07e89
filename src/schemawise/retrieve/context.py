"""The context pack: the smallest set of tables, join paths and columns a SQL writer needs.

`build_context` only wires the stages, in order:

    words.read_question          the question's words, once
    reading.read_index           the index, read once up front (the only I/O), with
      source_choice.vote           the database chosen between its two reads, and
      source_choice.second_opinion a model's pick when several come close (optional)
    relevance.below_floor        nothing close enough: an empty pack that says why
    evidence.table_evidence      each table's score and reasons
    notes.definition_tables      the tables a definition the question asks about names
    tables.choose_tables         structural rerank, then the tree of joins
    column_choice.choose_columns two tiers of columns, with values
    notes.metadata_notes         value meanings, definitions, examples
    render.with_text             the prompt text and its tokens
    budget.fit_budget            the token budget, when one is set
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, Literal

import psycopg

from schemawise.enrich.metadata import Metadata
from schemawise.errors import SchemawiseError
from schemawise.graph.families import collapsed
from schemawise.graph.model import SchemaGraph
from schemawise.index import store
from schemawise.index.cards import TABLE_SEPARATOR
from schemawise.index.embed import Embedder, word_reader
from schemawise.retrieve.budget import fit_budget
from schemawise.retrieve.card_reading import card_nearness, nearest_card
from schemawise.retrieve.column_choice import choose_columns
from schemawise.retrieve.evidence import table_evidence
from schemawise.retrieve.lexicon import (
    Readings,
    WordReadings,
    nearest_schema_words,
    schema_readings,
    unknown_words,
    words_reading_as_names,
)
from schemawise.retrieve.notes import Notes, definition_tables, metadata_notes, small_schema_note
from schemawise.retrieve.pack import (
    ALTERNATIVES,
    ColumnChoice,
    ContextPack,
    SourceScore,
    TableChoice,
)
from schemawise.retrieve.reading import IndexRead, Search, read_index
from schemawise.retrieve.relevance import (
    DEFAULT_FLOOR,
    Relevance,
    RelevanceFloor,
    below_floor,
    far_from_every_card,
    measure,
)
from schemawise.retrieve.render import with_text
from schemawise.retrieve.settings import RETRIEVAL, ContextSettings
from schemawise.retrieve.source_choice import second_opinion, vote
from schemawise.retrieve.tables import choose_tables
from schemawise.retrieve.unknown_names import unknown_names
from schemawise.retrieve.words import AGGREGATING, compounds, proper_names, read_question

# The relevance floor reads the question against this many of the tables the search found best
# (`RelevanceFloor.card_reading`): a pack holds six at most, and each card read costs ~6 ms.
CARDS_READ = 20

# The names callers import from here (the contract and the settings live in their own modules).
__all__ = ["ColumnChoice", "ContextPack", "ContextSettings", "TableChoice", "build_context"]


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
    follows: str = "",
) -> ContextPack:
    """`follows`: the earlier questions of a conversation that `question` follows up ("now
    only for Rock" after "tracks per genre"), read together with it: a follow-up's own words
    need not name what it is about. A follow-up is not held to the relevance floor: the
    questions it follows were (the assistant decides when a turn is a new subject:
    agent/follow_up.py)."""
    if not f"{question}{evidence}".strip():
        raise SchemawiseError(
            "The question is empty.", 'Ask one, e.g. schemawise context "How many orders shipped?"'
        )
    settings = settings or ContextSettings()
    follows = follows.strip()
    asked = f"{follows}\n{question}" if follows else question
    # Retrieval sees one entry per sharded family, as the index does.
    graphs = {name: collapsed(graph) for name, graph in graphs.items()}
    readings = Readings()
    cards: Callable[[list[str]], dict[str, float]] | None = None
    searched = {s: graphs[s] for s in (sources or graphs) if s in graphs}
    if lexicon_on(settings, len(searched), embedder.name):
        # Only words the searched index never saw (in names, descriptions or values) are read
        # as schema words: a value ("APG") or a word of a description is already found. The
        # question's words only: evidence is the schema's own terms and formulas (read with
        # it, BIRD given kept 4.07 tables instead of 3.97 for the same recall).
        candidates = unknown_words(asked)
        seen = set().union(*store.words_found(conn, " ".join(candidates), sources).values())
        lexemes = store.word_lexemes(conn, candidates)
        unseen = [w for w in candidates if lexemes.get(w) and not lexemes[w] & seen]
        readings = schema_readings(unseen, searched, embedder, RETRIEVAL.lexicon_similarity)
        # The word reader also reads the question against each database's table cards.
        if (reader := word_reader()) is not None:
            cards = partial(_cards_near, asked, searched, reader)
    words = read_question(asked, evidence, tuple(sorted(set(readings.words.values()))))
    search = Search(
        words.lexical, words.vocabulary, embedder.embed([words.text])[0], sources,
        settings.candidates,
    )  # fmt: skip
    read = read_index(
        conn, search, graphs.keys(),
        lambda hits, found: vote(
            hits, found, graphs, sources, words, settings, readings.near, cards
        ),
    )  # fmt: skip
    if read is None:  # nothing current matched: an empty pack, not a guess
        return ContextPack(question=question, follows=follows,
                           empty_reason="no document of the index matched")  # fmt: skip
    floor = None if follows else settings.relevance_floor
    if floor is not None and floor.embedder != embedder.name:
        floor = None  # calibrated for another embedder (relevance.RelevanceFloor.embedder)
    judge = partial(_relevance_of, conn, asked, words.named, graphs, embedder, floor, words.text)
    relevance = judge(read)
    if (reason := below_floor(relevance, floor)) is not None:
        # No database is chosen, but the caller still learns which ones came nearest (a UI
        # can offer them; naming one as the source with the floor off asks it anyway).
        nearest = [SourceScore(source=s, score=v) for s, v in read.ranking[:ALTERNATIVES]]
        several = len(sources) > 1 if sources else len(graphs) > 1
        return ContextPack(
            question=question, follows=follows, relevance=relevance, empty_reason=reason,
            alternatives=nearest if several else [],
        )  # fmt: skip
    # A model's pick among close calls (optional), after the floor: it is asked only about a
    # question something answers, and a pick the floor would empty leaves the vote's choice.
    chosen_by: Literal["vote", "model"] = "vote"
    ranking, changed = second_opinion(asked, read.ranking, settings.source_picker)
    if changed:
        picked = read_index(conn, search, graphs.keys(), lambda hits, found: ranking)
        if picked is not None and below_floor(picked_relevance := judge(picked), floor) is None:
            read, relevance, chosen_by = picked, picked_relevance, "model"
    source, graph = read.source, graphs[read.source]
    meta = (metadata or {}).get(source)
    found = table_evidence(read.hits, graphs, [source], words.spelled, words.asked, settings)
    # A definition the question asks about brings the tables it names (net revenue: refunds).
    brought = definition_tables(graph, meta, words.asked) if meta is not None else {}
    chosen = choose_tables(asked, found, source, graph, meta, words.asked, settings, brought)
    # A table left out for accounting for no word of the question may be asked for in other
    # words than its name's ("buddies" for `friend`): read the unfound words against the names
    # of those tables, by the word reader, and choose again with what they account for.
    if read_as := _read_as_names(conn, asked, read, graph, chosen.passed_over):
        chosen = choose_tables(asked, found, source, graph, meta, words.asked, settings, brought,
                               read_as)  # fmt: skip
    names = [t.name for t in chosen.tables]
    matched = {name: found.columns.get((source, name), []) for name in names}
    columns = choose_columns(
        asked, words.text, graph, names, chosen.join_paths, matched, words.asked, meta,
        settings,
    )  # fmt: skip
    notes = metadata_notes(names, columns, meta, words.asked) if meta is not None else Notes()
    pack = ContextPack(
        question=question, follows=follows, source=source, schema_version=graph.version,
        tables=chosen.tables, columns=columns, join_paths=chosen.join_paths,
        definitions=notes.definitions, value_mappings=notes.value_mappings,
        examples=notes.examples, relevance=relevance,
        alternatives=[SourceScore(source=s, score=v) for s, v in read.ranking[1:ALTERNATIVES + 1]],
        source_chosen_by=chosen_by, passed_over=chosen.passed_over[: settings.passed_over],
        unknown_names=unknown_names(question, graph),
    )  # fmt: skip
    pack = with_text(pack, graph)
    if settings.budget is not None:
        pack = fit_budget(pack, graph, settings.budget)
    # A hint beside the pack, not part of its text (nor of its tokens).
    pack.definitions.extend(small_schema_note(source, graph))
    return pack


def _relevance_of(
    conn: psycopg.Connection[Any],
    asked: str,
    named: set[str],
    graphs: dict[str, SchemaGraph],
    embedder: Embedder,
    floor: RelevanceFloor | None,
    text: str,  # the question and its evidence
    read: IndexRead,
) -> Relevance:
    """How well the read's database matches the question: the floor's measures, with the
    unfound words read against its lexicon when they can decide, and the question read as a
    sentence against the tables it found best when nothing is named."""
    relevance = measure(
        [h.distance for h in read.hits], read.words, read.words_found,
        naming_words(conn, named), graphs[read.source],
    )  # fmt: skip
    if relevance.named:
        return relevance
    if floor is not None and (reader := word_reader()) is not None:
        # Names and two-word phrases run together ("quick play" → quickplay) that the data
        # holds: the question is about values of this database, however far it reads.
        if written := [*proper_names(asked), *compounds(asked)]:
            lexemes = store.word_lexemes(conn, written)
            relevance.names_found = [w for w in written if lexemes.get(w, set()) & read.words_found]
        tables = [t for h in read.hits for t in h.table.split(TABLE_SEPARATOR)]
        best = list(dict.fromkeys(tables))[:CARDS_READ]
        relevance.card_similarity = nearest_card(text, graphs[read.source], best, reader)
        relevance.reader = reader.name
        if far_from_every_card(relevance, floor):
            return relevance  # the words need no reading: nothing they read as can keep it
    if floor is None or below_floor(relevance, floor) is not None:
        # Read only when they can decide (or for the record, with no floor): a few words
        # against the schema's lexicon, embedded once per graph.
        unfound = unfound_readings(conn, asked, read, graphs[read.source], embedder)
        relevance.nearest, relevance.nearest_tables = unfound.nearest, unfound.tables
        relevance.reader = unfound.reader
    return relevance


def _read_as_names(
    conn: psycopg.Connection[Any],
    question: str,
    read: IndexRead,
    graph: SchemaGraph,
    passed_over: list[TableChoice],
) -> dict[str, dict[str, str]]:
    """The unfound question words that read as a word of the name of a table passed over as
    wordless, by the word reader at the relevance floor's bar for a table's word (its scale:
    without the reader, nothing is read)."""
    wordless = [t.name for t in passed_over if t.left_out == "wordless"]
    if not wordless:
        return {}
    unfound = unfound_words(conn, question, read)
    reader = word_reader() if unfound else None
    if reader is None:
        return {}
    return words_reading_as_names(unfound, wordless, graph, reader, DEFAULT_FLOOR.table_reading)


def _cards_near(
    question: str, searched: dict[str, SchemaGraph], reader: Embedder, sources: list[str]
) -> dict[str, float]:
    """How near the question comes to each of `sources`' nearest table card."""
    return card_nearness(question, {s: searched[s] for s in sources if s in searched}, reader)


def lexicon_on(settings: ContextSettings, searched: int, embedder: str) -> bool:
    """Whether the schema's lexicon reads the question: as `settings` say, or by default when
    there is a database to choose (more than one searched) and the embedder is the one its
    similarity bar and vote were measured with (the relevance floor's)."""
    if settings.lexicon is not None:
        return settings.lexicon
    return searched > 1 and embedder == DEFAULT_FLOOR.embedder


def naming_words(conn: psycopg.Connection[Any], named: set[str]) -> set[str]:
    """The question's words that may name the schema for the relevance floor: not words of
    grammar the index's text search drops ("into", "than", "most"), nor words of aggregating
    ("average", "total"): a column named `Average` or a comment saying "into" does not make
    "the average wingspan of migratory birds" a question about the database."""
    lexemes = store.word_lexemes(conn, sorted(named))
    return {w for w in named if lexemes.get(w) and w not in AGGREGATING}


def unfound_readings(
    conn: psycopg.Connection[Any],
    question: str,
    read: IndexRead,
    graph: SchemaGraph,
    embedder: Embedder,
) -> WordReadings:
    """The question's words the chosen database does not hold, each read as its nearest schema
    word and its nearest word of a table's name (the relevance floor's word-by-word measure):
    by the word reader when one is installed (loaded only when there is a word to read), else
    by `embedder`."""
    unfound = unfound_words(conn, question, read)
    if not unfound:
        return WordReadings()
    return nearest_schema_words(unfound, graph, word_reader() or embedder)


def unfound_words(conn: psycopg.Connection[Any], question: str, read: IndexRead) -> list[str]:
    """The question's content words (lexicon.py `unknown_words`) that no document of the
    chosen database holds, as the index stores words."""
    candidates = unknown_words(question)
    lexemes = store.word_lexemes(conn, candidates)
    return [w for w in candidates if lexemes.get(w) and not lexemes[w] & read.words_found]
