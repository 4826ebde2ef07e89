"""The schema graph for `check` and `run`: the one `index` stored, when the database's catalogue
still matches it, else a fresh extraction.

Extraction infers joins and measures cardinality on the data (seconds to minutes); reading the
catalogue alone is cheap. So the stored graph is reused when the catalogue's fingerprint
(`SchemaGraph.structure_version`) is the one the stored graph was built from, and the caller is
told which graph it got.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import psycopg

from schemawise.db import connect
from schemawise.db.base import Source
from schemawise.db.urls import parse_url, same_stored_url
from schemawise.errors import SchemawiseError
from schemawise.graph.extract import ExtractOptions, extract_graph
from schemawise.graph.model import Problem, SchemaGraph, structure_fingerprint

INDEXED = "index"
EXTRACTED = "extracted"


@dataclass(frozen=True)
class GraphChoice:
    graph: SchemaGraph
    origin: str  # INDEXED or EXTRACTED
    source: str | None = None  # the indexed source's name, when reused


def _same_database(url: str, indexed_url: str) -> bool:
    """Two URLs naming the same database: files by resolved path, servers by URL."""
    try:
        mine, theirs = parse_url(url), parse_url(indexed_url)
    except SchemawiseError:  # an unreadable stored URL simply does not match
        return False
    if mine.kind != theirs.kind:
        return False
    if mine.kind in ("sqlite", "duckdb"):
        return Path(mine.target).resolve() == Path(theirs.target).resolve()
    if mine.kind == "embedded":
        return mine.target == theirs.target
    # A password given or not (and the stored one redacted): one database.
    return same_stored_url(mine.target, theirs.target)


@dataclass(frozen=True)
class _Stored:
    name: str
    graph: SchemaGraph
    overlay: Path | None  # the overlay file it was indexed with


def _indexed(url: str) -> _Stored | None:
    """The stored graph of `url`, when the embedded index is running and holds it."""
    from schemawise.db.embedded import status

    running = status()
    if not running.running or not running.url:
        return None  # never start a server just to look
    try:
        with psycopg.connect(running.url, connect_timeout=5) as conn:
            exists = conn.execute("SELECT to_regclass('schemawise.index_sources')").fetchone()
            if not exists or exists[0] is None:
                return None
            rows = conn.execute(
                "SELECT source, url, graph::text, options->>'overlay' "
                "FROM schemawise.index_sources ORDER BY source"
            ).fetchall()
    except psycopg.Error:
        return None
    for name, stored_url, text, overlay in rows:
        if _same_database(url, str(stored_url)):
            return _Stored(
                str(name), SchemaGraph.from_json(text), Path(overlay) if overlay else None
            )
    return None


def catalog_fingerprint(source: Source) -> str:
    """The fingerprint of what the database's catalogue says now (tables, columns, declared
    keys): the stored graph's `structure_version` when nothing changed since it was built."""
    catalog = source.read_catalog()
    return structure_fingerprint(
        catalog.tables,
        [
            (fk.child_table, list(fk.child_columns), fk.parent_table, list(fk.parent_columns))
            for fk in catalog.foreign_keys
        ],
    )


def graph_for(url: str, *, budget_seconds: float = 20.0) -> GraphChoice:
    """The indexed graph when it is current, else an extracted one (data checks included),
    with the joins the overlay it was indexed with states or denies."""
    found = _indexed(url)
    with connect(url) as source:
        if found is not None and catalog_fingerprint(source) == found.graph.structure_version():
            return GraphChoice(found.graph, INDEXED, found.name)
        graph = extract_graph(source, ExtractOptions(budget_seconds=budget_seconds))
        if found is not None and found.overlay is not None:
            _with_overlay_joins(graph, found.overlay, source, budget_seconds)
    return GraphChoice(graph, EXTRACTED)


def _with_overlay_joins(graph: SchemaGraph, overlay: Path, source: Source, budget: float) -> None:
    """A stale index's overlay still has its word on joins (a denied join stays denied until
    `sync`); an overlay that no longer reads is a problem of the graph, not a failed run."""
    from schemawise.enrich.apply import apply_overlay_joins, overlay_checker
    from schemawise.enrich.metadata import from_overlay

    try:
        meta = from_overlay(overlay)
    except SchemawiseError as exc:
        graph.problems.append(Problem(stage="overlay", message=exc.message, hint=exc.hint))
        graph.partial = True
        return
    apply_overlay_joins(graph, meta, overlay_checker(source, budget))
