"""The context engine as library calls: what `schemawise index`, `sources` and `context` do,
for a program (an agent, a notebook, the assistant) rather than a shell.

Each call opens its own connection to the index: the embedded Postgres unless `index_url`
names another. Errors are SchemawiseError with a hint, as on the command line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from schemawise.errors import SchemawiseError
from schemawise.index.connection import connect_index
from schemawise.index.embed import get_embedder
from schemawise.index.sources import (
    IndexReport,
    index_source,
    list_sources,
    load_graphs,
    load_metadata,
)
from schemawise.retrieve.context import build_context
from schemawise.retrieve.pack import ContextPack
from schemawise.retrieve.settings import ContextSettings


def index_url_or_embedded(index_url: str | None) -> str:
    """The index to use: the one named, else the embedded Postgres (started if need be)."""
    if index_url:
        return index_url
    from schemawise.db.embedded import ensure_started

    return ensure_started()


def index(
    url: str,
    name: str | None = None,
    *,
    dictionary: Path | None = None,
    query_log: Path | None = None,
    dbt: Path | None = None,
    overlay: Path | None = None,
    profile: bool = True,
    describe: bool = False,
    index_url: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> IndexReport:
    """Extract, enrich and index one database; only documents whose text changed are
    re-embedded, so calling it again is `sync` for that source. `describe`: the configured
    model writes a description and everyday names for each table nothing else describes."""
    describer = None
    if describe:
        from schemawise.agent.llm import require_llm
        from schemawise.enrich.generated import with_model

        describer = with_model(require_llm())
    return index_source(
        index_url_or_embedded(index_url), url, name, dictionary=dictionary,
        query_log=query_log, dbt=dbt, overlay=overlay, profile=profile, describe=describer,
        progress=progress,
    )  # fmt: skip


def sources(*, index_url: str | None = None) -> list[dict[str, Any]]:
    """The indexed sources with their versions and sizes."""
    with connect_index(index_url_or_embedded(index_url)) as conn:
        return list_sources(conn)


def source_freshness(*, index_url: str | None = None) -> dict[str, dict[str, Any]]:
    """Per indexed source: whether its database still has the tables, columns and declared
    keys it was indexed with (`current`: True, False, or None when it could not be read), and
    why in words. Each database is connected to (a password from PGPASSWORD or ~/.pgpass)."""
    from schemawise.db import connect
    from schemawise.db.urls import without_redacted_password
    from schemawise.graph.reuse import catalog_fingerprint

    with connect_index(index_url_or_embedded(index_url)) as conn:
        entries = list_sources(conn)
        graphs = load_graphs(conn) if entries else {}
    found: dict[str, dict[str, Any]] = {}
    for entry in entries:
        name, url = entry["source"], without_redacted_password(entry["url"])
        try:
            with connect(url) as source:
                now = catalog_fingerprint(source)
        except SchemawiseError as exc:
            found[name] = {"current": None, "why": f"not read: {exc.message}", "hint": exc.hint}
            continue
        if now == graphs[name].structure_version():
            found[name] = {"current": True, "why": "the database's tables are as indexed"}
        else:
            found[name] = {"current": False, "why": f"changed since indexed: run "
                           f"`schemawise sync {name}`"}  # fmt: skip
    return found


def remove_source(name: str, *, index_url: str | None = None) -> int:
    """Take an indexed source out of the index (the database itself is untouched); the number
    of documents it had. An unknown name raises SchemawiseError with the indexed names."""
    from schemawise.index.sources import remove_source as remove

    with connect_index(index_url_or_embedded(index_url)) as conn:
        return remove(conn, name)


def context(
    question: str,
    *,
    evidence: str = "",
    sources: list[str] | None = None,
    budget: int | None = None,
    relevance_floor: bool | None = None,
    lexicon: bool | None = None,
    settings: ContextSettings | None = None,
    index_url: str | None = None,
    follows: str = "",
) -> ContextPack:
    """The context pack for a question over the indexed sources (or only `sources`): the
    database, tables with reasons, join paths, pruned columns, definitions and the text.
    `budget` (tokens) overrides the one in `settings`; `relevance_floor` False turns off the
    calibrated floor (on by default: an empty pack, with the reason, for a question nothing in
    the index is about; None keeps what `settings` say); `lexicon` True reads a
    question word the index never saw as the nearest schema word and prefers the database
    whose words come nearest (retrieve/lexicon.py) and whose table cards the word reader
    reads nearest the question (retrieve/card_reading.py), False never does, None keeps what
    `settings` say (by default: when more than one database is searched);
    `follows`, the earlier questions a follow-up builds on (one per line), are read with it,
    and then no floor applies (they passed it)."""
    settings = settings or ContextSettings()
    if lexicon is not None:
        settings = replace(settings, lexicon=lexicon)
    if budget is not None:
        settings = replace(settings, budget=budget)
    if relevance_floor is not None:
        from schemawise.retrieve.relevance import DEFAULT_FLOOR

        settings = replace(settings, relevance_floor=DEFAULT_FLOOR if relevance_floor else None)
    with connect_index(index_url_or_embedded(index_url)) as conn:
        graphs = load_graphs(conn, sources)
        return build_context(
            conn, question, graphs, get_embedder(), evidence=evidence, sources=sources,
            settings=settings, metadata=load_metadata(conn, list(graphs)), follows=follows,
        )  # fmt: skip


def ask(
    question: str,
    *,
    sources: list[str] | None = None,
    evidence: str = "",
    model: str | None = None,
    run: bool = True,
    index_url: str | None = None,
) -> Any:
    """A question answered end to end (schemawise.agent.assistant.Reply): SQL written from
    the context pack by the model (`model` is a SCHEMAWISE_LLM-style spec; the configured
    one when None), checked, fixed at most twice, run inside the guards, and the answer
    stated from the result. With no model configured, the Reply carries the pack and a
    ready prompt (`status: "no_model"`)."""
    from schemawise.agent.assistant import AskOptions, Assistant
    from schemawise.agent.llm import LLM, optional_llm, parse_spec

    llm = LLM.from_spec(parse_spec(model)) if model else optional_llm()
    helper = Assistant(llm, index_url=index_url)
    return helper.ask(question, options=AskOptions(sources=sources, evidence=evidence, run=run))
