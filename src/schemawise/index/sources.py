"""Indexed sources: each one's graph (JSON), version and where it came from, beside its
documents — what `context` reads and `sync` compares against."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from schemawise.db import Source, connect
from schemawise.db.urls import absolute_url, redact, same_stored_url
from schemawise.enrich.apply import (
    about_tables,
    add_relationships,
    apply_overlay_joins,
    overlay_checker,
    unknown_names,
)
from schemawise.enrich.apply import descriptions as describe_columns
from schemawise.enrich.dictionary import from_description_csvs
from schemawise.enrich.generated import Describe, describe_tables
from schemawise.enrich.metadata import Metadata, from_dbt, from_overlay
from schemawise.enrich.profile import ColumnProfile, profile_source, wordlike
from schemawise.enrich.querylog import read_log
from schemawise.enrich.usage import tables_and_columns, usage_from_log
from schemawise.errors import SchemawiseError
from schemawise.graph.extract import ExtractOptions, extract_graph
from schemawise.graph.model import Problem, SchemaGraph
from schemawise.index import store
from schemawise.index.cards import (
    Document,
    documents,
    example_documents,
    glossary_documents,
)
from schemawise.index.connection import connect_index
from schemawise.index.embed import get_embedder

SOURCES_SQL = """
CREATE TABLE IF NOT EXISTS schemawise.index_sources (
    source     text PRIMARY KEY,
    url        text NOT NULL,
    version    text NOT NULL,
    graph      jsonb NOT NULL,
    documents  integer NOT NULL,
    indexed_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE schemawise.index_sources ADD COLUMN IF NOT EXISTS metadata jsonb;
ALTER TABLE schemawise.index_sources ADD COLUMN IF NOT EXISTS options jsonb;
"""


@dataclass
class IndexReport:
    source: str
    version: str
    previous_version: str | None
    tables: int
    documents: int
    embedded: int  # documents new or changed (the only ones embedded)
    removed: int
    seconds: float
    # What failed while the graph was built (a table unreadable, an overlay join that names
    # no table): {stage, table, message, hint}, also kept in the stored graph.
    problems: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return self.__dict__.copy()


# Sources that `bench linking` and `bench context-speed` of earlier releases wrote into the
# user's own index without registering them (they now use a scratch database).
_BENCHMARK_SOURCES = ["spider/%", "bird/%", "spider2/%", "synthetic/%"]


def remove_benchmark_leftovers(conn: psycopg.Connection[Any]) -> int:
    """Delete documents of those benchmarks that no registered source owns; return how many."""
    orphans = (
        "source LIKE ANY(%s) AND NOT EXISTS "
        "(SELECT 1 FROM schemawise.index_sources s WHERE s.source = {}.source)"
    )
    removed = conn.execute(
        "DELETE FROM schemawise.index_documents d WHERE " + orphans.format("d"),
        (_BENCHMARK_SOURCES,),
    ).rowcount
    conn.execute(
        "DELETE FROM schemawise.index_vocabulary v WHERE " + orphans.format("v"),
        (_BENCHMARK_SOURCES,),
    )
    return removed


def index_source(
    index_url: str,
    url: str,
    name: str | None = None,
    *,
    dictionary: Path | None = None,
    query_log: Path | None = None,
    dbt: Path | None = None,
    overlay: Path | None = None,
    profile: bool = True,
    describe: Describe | None = None,
    progress: Callable[[str], None] | None = None,
    stored_as: str | None = None,
) -> IndexReport:
    """Extract, enrich and index one source. The enrichment inputs are stored with it, so
    that `sync` re-reads the same dbt project, overlay, dictionary and log. `stored_as`: the
    URL to keep for it, when not `url` redacted (`sync` connects without the password
    placeholder and keeps the URL as it was stored)."""
    import time

    say = progress or (lambda _: None)
    started = time.perf_counter()
    options = {
        # Files by absolute path: `sync`, and `check` on a stale index, read them from
        # wherever they are run.
        "dictionary": str(dictionary.resolve()) if dictionary else None,
        "query_log": str(query_log.resolve()) if query_log else None,
        "dbt": str(dbt.resolve()) if dbt else None,
        "overlay": str(overlay.resolve()) if overlay else None,
        "profile": profile,
        "describe": describe is not None,
    }
    # The team's files first: a mistake in one fails before the database is read.
    given = team_metadata(dbt, overlay)
    say("extracting the schema graph")
    with connect(url) as source:
        graph, meta = read_enriched(source, given, query_log, profile, say)
    if overlay:  # a typo there would otherwise pass silently (a dbt project names more)
        graph.problems.extend(unknown_names(graph, from_overlay(overlay), overlay.name))
    name = name or default_name(url)
    if describe is not None:
        # After dbt and the overlay: only tables they leave undescribed are asked about.
        generated = describe_tables(graph, meta, sample_values(meta), describe,
                                    descriptions_cache(name), say)  # fmt: skip
        meta = meta.merge(Metadata(tables=generated))
    described = from_description_csvs(dictionary) if dictionary else {}
    described.update(describe_columns(graph, meta))
    docs = documents(
        name, graph, described, about_tables(graph, meta), sample_values(meta), seen_values(meta)
    )
    docs += metadata_documents(name, graph, meta)
    embedder = get_embedder()
    with connect_index(index_url) as conn:
        store.ensure_schema(conn, embedder.dim)
        conn.execute(SOURCES_SQL)
        remove_benchmark_leftovers(conn)
        previous = conn.execute(
            "SELECT version, url, options FROM schemawise.index_sources WHERE source = %s",
            (name,),
        ).fetchone()
        stored_url = stored_as or redact(absolute_url(url))
        # Said in this report only: the stored graph keeps what extraction found.
        said = reindex_problems(name, stored_url, options, len(graph.tables), previous)
        # One transaction for the documents and their registration: an interrupted `index`
        # leaves the index as it was (nothing partial, nothing unregistered).
        counts = store.replace_source(conn, name, docs, embedder, graph.version, say, commit=False)
        conn.execute(
            "INSERT INTO schemawise.index_sources (source, url, version, graph, documents, "
            "metadata, options) VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (source) DO "
            "UPDATE SET url = EXCLUDED.url, version = EXCLUDED.version, graph = EXCLUDED.graph, "
            "documents = EXCLUDED.documents, metadata = EXCLUDED.metadata, "
            "options = EXCLUDED.options, indexed_at = now()",
            (
                name,
                stored_url,
                graph.version,
                graph.to_json(indent=None),
                len(docs),
                meta.model_dump_json(),
                json.dumps(options),
            ),
        )
        conn.commit()
        store.tidy_after(conn, counts)
    return IndexReport(
        source=name,
        version=graph.version,
        previous_version=previous[0] if previous else None,
        tables=len(graph.tables),
        documents=len(docs),
        embedded=counts.embedded,
        removed=counts.removed,
        seconds=round(time.perf_counter() - started, 3),
        problems=[p.model_dump() for p in [*graph.problems, *said]],
    )


# The files an index is enriched with, by the option that gives them.
_FILE_OPTIONS = {"dbt": "--dbt", "overlay": "--overlay", "dictionary": "--dictionary",
                 "query_log": "--query-log"}  # fmt: skip


def reindex_problems(
    name: str,
    url: str,
    options: dict[str, Any],
    tables: int,
    previous: tuple[Any, ...] | None,
) -> list[Problem]:
    """What a user indexing `name` again should know: that it held another database (now
    replaced), that files it was enriched with are not given this time (their metadata goes),
    or that the database has no table at all. `previous`: (version, url, options) stored."""
    problems: list[Problem] = []
    if tables == 0:
        problems.append(Problem(
            stage="index", message=f"No table was found in {url}.",
            hint="Check the database name, --schema, and that the role may see the tables "
            "(USAGE on their schema).",
        ))  # fmt: skip
    if previous is None:
        return problems
    _, before, stored = previous
    if before and not same_stored_url(before, url):
        problems.append(Problem(
            stage="index", message=f"{name} held {before}; it now holds {url} instead.",
            hint=f"To keep both, index the other one with --name (its own name, not {name}).",
        ))  # fmt: skip
    stored = stored if isinstance(stored, dict) else json.loads(stored or "{}")
    dropped = [key for key in _FILE_OPTIONS if stored.get(key) and not options.get(key)]
    for key in dropped:
        problems.append(Problem(
            stage="index",
            message=f"{name} was indexed with {_FILE_OPTIONS[key]} {stored[key]}, not given "
            "this time: what it said is no longer in the index.",
            hint=f"Give it again, or run `schemawise sync {name}`, which keeps the files a "
            "source was indexed with.",
        ))  # fmt: skip
    return problems


def team_metadata(dbt: Path | None = None, overlay: Path | None = None) -> Metadata:
    """What the team's files say: a dbt project's and an overlay's metadata, merged."""
    given = Metadata()
    if dbt:
        given = given.merge(from_dbt(dbt))
    if overlay:
        given = given.merge(from_overlay(overlay))
    return given


def read_enriched(
    source: Source,
    given: Metadata,
    query_log: Path | None = None,
    profile: bool = True,
    progress: Callable[[str], None] | None = None,
    budget_seconds: float = 30,
) -> tuple[SchemaGraph, Metadata]:
    """The schema graph and metadata of an open database as `index` reads them: joins checked
    on the data, profiles, the query log's usage, and the team's metadata with its
    relationships and stated joins applied to the graph."""
    say = progress or (lambda _: None)
    # A file, or `pg_stat_statements` of this very database (enrich/querylog.py).
    log = read_log(query_log, source) if query_log else None
    graph = extract_graph(source, ExtractOptions(query_log=log, budget_seconds=budget_seconds))
    if profile:
        say("profiling the data")
    profiles = profile_source(source, graph) if profile else {}
    meta = Metadata(profiles=profiles, usage=usage_from_log(log, graph) if log else None)
    meta = meta.merge(given)
    add_relationships(graph, meta)
    # While the database is open: the joins the overlay states are measured as others are.
    apply_overlay_joins(graph, meta, overlay_checker(source))
    return graph, meta


# Logged queries indexed as examples, at most: the log's shortest query per set of tables.
MAX_LOGGED_EXAMPLES = 200


def metadata_documents(name: str, graph: SchemaGraph, meta: Metadata) -> list[Document]:
    """Example and glossary documents: the overlay's examples, logged queries, definitions
    and jargon, each tied to the tables it is about."""
    examples: list[tuple[str, str, list[str]]] = []
    for example in meta.examples:
        read = tables_and_columns(example.sql, graph)
        examples.append((example.question, example.sql, sorted(read[0]) if read else []))
    if meta.usage is not None:
        logged = sorted(meta.usage.examples, key=lambda q: len(q.sql))[:MAX_LOGGED_EXAMPLES]
        examples += [("", q.sql, q.tables) for q in logged]
    terms = [(d.name, d.text) for d in meta.definitions] + list(meta.jargon.items())
    return example_documents(name, examples) + glossary_documents(name, graph, terms)


def descriptions_cache(source: str) -> Path:
    """Where a source's model-written table descriptions are kept between runs."""
    from schemawise.config import home_dir

    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in source)
    return home_dir() / "descriptions" / f"{safe}.json"


def sample_values(meta: Metadata) -> dict[str, list[str]]:
    """`table.column` → the values its document shows: the whole list of an enum-like
    column, else its most common values; none for free text (`worded`)."""
    return {key: p.values or p.samples for key, p in worded(meta).items() if p.values or p.samples}


def seen_values(meta: Metadata) -> dict[str, list[str]]:
    """`table.column` → the distinct values the profile saw (for the value index): the
    whole list of an enum-like column, else those of the sample that read as words; none
    for free text (`worded`)."""
    profiles = worded(meta)
    listed = {key: [v for v in p.seen or p.values if wordlike(v)] for key, p in profiles.items()}
    return {key: values for key, values in listed.items() if values}


def worded(meta: Metadata) -> dict[str, ColumnProfile]:
    """The profiles whose values are worth indexing: not those of free-text columns
    (`ColumnProfile.free_text`). A comment column's random sentences would make every common word
    look like the database's own ("yet", "build" in a warehouse's item descriptions) and
    pull questions about another database towards it."""
    return {key: p for key, p in meta.profiles.items() if not p.free_text}


def default_name(url: str) -> str:
    """The name a source gets when none is given: the file's stem, the database's name."""
    if url in ("embedded", "demo"):
        return "embedded"
    if url.startswith("embedded/"):
        return url.split("/", 1)[1]
    tail = redact(url).rsplit("/", 1)[-1].split("?", 1)[0]
    return Path(tail).stem or "default"


def load_graphs(
    conn: psycopg.Connection[Any], sources: list[str] | None = None
) -> dict[str, SchemaGraph]:
    store_exists = conn.execute(
        "SELECT to_regclass('schemawise.index_sources') IS NOT NULL"
    ).fetchone()
    if not store_exists or not store_exists[0]:
        raise SchemawiseError("Nothing is indexed yet.", "Run `schemawise index URL` first.")
    rows = conn.execute("SELECT source, graph::text FROM schemawise.index_sources").fetchall()
    graphs = {name: SchemaGraph.from_json(text) for name, text in rows}
    if sources:
        unknown = [s for s in sources if s not in graphs]
        if unknown:
            raise SchemawiseError(
                f"No indexed source {', '.join(repr(u) for u in unknown)}.",
                f"Indexed: {', '.join(sorted(graphs)) or 'none'}.",
            )
        graphs = {k: v for k, v in graphs.items() if k in sources}
    return graphs


def remove_source(conn: psycopg.Connection[Any], name: str) -> int:
    """Take a source out of the index (its registration, documents and vocabulary), in one
    transaction; the database itself is not touched. Returns how many documents it had."""
    known = [entry["source"] for entry in list_sources(conn)]
    if name not in known:
        raise SchemawiseError(
            f"No indexed source {name!r}.", f"Indexed: {', '.join(known) or 'none'}."
        )
    with conn.transaction():
        deleted = conn.execute(
            "DELETE FROM schemawise.index_documents WHERE source = %s", (name,)
        ).rowcount
        conn.execute("DELETE FROM schemawise.index_vocabulary WHERE source = %s", (name,))
        conn.execute("DELETE FROM schemawise.index_sources WHERE source = %s", (name,))
    conn.commit()
    return deleted


def load_metadata(conn: psycopg.Connection[Any], sources: list[str]) -> dict[str, Metadata]:
    rows = conn.execute(
        "SELECT source, metadata::text FROM schemawise.index_sources WHERE source = ANY(%s) "
        "AND metadata IS NOT NULL",
        (sources,),
    ).fetchall()
    return {name: Metadata.model_validate_json(text) for name, text in rows}


def list_sources(conn: psycopg.Connection[Any]) -> list[dict[str, Any]]:
    exists = conn.execute("SELECT to_regclass('schemawise.index_sources') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return []
    conn.execute(SOURCES_SQL)  # an index made by an older release gains the new columns
    rows = conn.execute(
        "SELECT source, url, version, documents, indexed_at, "
        "jsonb_array_length(graph->'tables'), jsonb_array_length(graph->'edges'), "
        "coalesce(options, '{}'::jsonb) FROM schemawise.index_sources ORDER BY source"
    ).fetchall()
    return [
        {"source": r[0], "url": r[1], "version": r[2], "documents": r[3], "indexed_at": r[4],
         "tables": r[5], "edges": r[6], "options": r[7]}
        for r in rows
    ]  # fmt: skip


def stored_options(entry: dict[str, Any]) -> dict[str, Any]:
    """`index_source` keyword arguments from a listed source's stored options."""
    options = entry.get("options") or {}
    out: dict[str, Any] = {
        key: Path(options[key])
        for key in ("dictionary", "query_log", "dbt", "overlay")
        if options.get(key)
    }
    if "profile" in options:
        out["profile"] = bool(options["profile"])
    if options.get("describe"):
        # Indexed with model-written descriptions: the configured model describes what
        # changed; without one, the kept descriptions are reused and nothing new is asked.
        from schemawise.agent.llm import optional_llm
        from schemawise.enrich.generated import cached_only, with_model

        llm = optional_llm()
        out["describe"] = _or_kept(with_model(llm)) if llm is not None else cached_only
    return out


def _or_kept(describe: Describe) -> Describe:
    """For `sync`: a model that cannot be reached does not stop re-indexing a changed schema;
    the kept descriptions serve, and tables without one are asked about next time."""
    from schemawise.errors import ModelUnreachableError

    def asked(prompt: str) -> str | None:
        try:
            return describe(prompt)
        except ModelUnreachableError:
            return None

    return asked
