"""The schema index in Postgres: documents with a tsvector and a pgvector column, searched by
one SQL statement that fuses the lexical and dense rankings (reciprocal rank fusion)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql

from schemawise.index.cards import Document
from schemawise.index.embed import Embedder
from schemawise.retrieve.settings import RETRIEVAL

SCHEMA_SQL = """
CREATE SCHEMA IF NOT EXISTS schemawise;
CREATE TABLE IF NOT EXISTS schemawise.index_documents (
    id           text PRIMARY KEY,
    source       text NOT NULL,
    kind         text NOT NULL,
    table_name   text NOT NULL,
    column_name  text,
    text         text NOT NULL,
    lexical      text NOT NULL,
    fingerprint  text NOT NULL,
    model        text NOT NULL,
    embedding    vector({dim}) NOT NULL,
    tsv          tsvector GENERATED ALWAYS AS
                 (to_tsvector('english', lexical || ' ' || text)) STORED
);
CREATE INDEX IF NOT EXISTS index_documents_hnsw ON schemawise.index_documents
    USING hnsw (embedding vector_cosine_ops);
CREATE INDEX IF NOT EXISTS index_documents_gin ON schemawise.index_documents USING gin (tsv);
CREATE INDEX IF NOT EXISTS index_documents_source ON schemawise.index_documents (source, kind);
-- A column later releases added; ALTER TABLE takes an exclusive lock even when it has nothing
-- to do, which deadlocks against another process writing documents, so only when missing.
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = 'schemawise'
                   AND table_name = 'index_documents' AND column_name = 'schema_version') THEN
        ALTER TABLE schemawise.index_documents ADD COLUMN schema_version text;
    END IF;
END $$;
-- Each source's words and in how many of its documents they occur: which database a question
-- is about is partly which one has the question's words at all (vocabulary_coverage).
CREATE TABLE IF NOT EXISTS schemawise.index_vocabulary (
    source     text NOT NULL,
    lexeme     text NOT NULL,
    documents  integer NOT NULL,
    PRIMARY KEY (lexeme, source)
);
CREATE INDEX IF NOT EXISTS index_vocabulary_source ON schemawise.index_vocabulary (source);
CREATE INDEX IF NOT EXISTS index_vocabulary_prefix
    ON schemawise.index_vocabulary ((lexeme COLLATE "C"));
"""

SEARCH_SQL = """
WITH q AS (
    SELECT nullif(%(lexemes)s, '')::tsquery AS query
), current_versions AS (
    SELECT * FROM unnest(%(versioned)s::text[], %(versions)s::text[]) AS v(source, version)
), dense AS (
    SELECT id, distance, row_number() OVER (ORDER BY distance, id) AS rank FROM (
        SELECT id, embedding <=> %(vector)s AS distance FROM schemawise.index_documents x
        WHERE kind = ANY(%(kinds)s) AND (%(sources)s::text[] IS NULL OR source = ANY(%(sources)s))
          AND (NOT x.source = ANY(%(versioned)s) OR EXISTS (SELECT 1 FROM current_versions c
               WHERE c.source = x.source AND c.version = x.schema_version))
        ORDER BY {dense_order} LIMIT %(n)s) d
), lexical AS (
    SELECT id, row_number() OVER (ORDER BY score DESC, id) AS rank FROM (
        -- BM25-like: the inverse document frequencies of the words a document has (a
        -- rare `station` outranks a common `day`), the cover density breaking ties.
        SELECT id, (SELECT coalesce(sum(t.idf), 0)
                    FROM unnest(%(terms)s::text[], %(idfs)s::float8[]) AS t(term, idf)
                    WHERE x.tsv @@ quote_literal(t.term)::tsquery)
                   + 0.01 * ts_rank_cd(tsv, q.query) AS score
        FROM schemawise.index_documents x, q
        WHERE q.query IS NOT NULL AND tsv @@ q.query AND kind = ANY(%(kinds)s)
          AND (%(sources)s::text[] IS NULL OR source = ANY(%(sources)s))
          AND (NOT x.source = ANY(%(versioned)s) OR EXISTS (SELECT 1 FROM current_versions c
               WHERE c.source = x.source AND c.version = x.schema_version))
        ORDER BY score DESC, id LIMIT %(n)s) l
)
SELECT d.id, d.source, d.kind, d.table_name, d.column_name,
       coalesce(1.0 / (60 + dense.rank), 0) * %(dense_weight)s
       + coalesce(1.0 / (60 + lexical.rank), 0) * %(lexical_weight)s AS score,
       dense.distance
FROM dense FULL OUTER JOIN lexical ON lexical.id = dense.id
JOIN schemawise.index_documents d ON d.id = coalesce(dense.id, lexical.id)
-- Equal fused scores are common (a document k-th on one side only ties with another k-th on
-- the other): the id orders them, so that the same question and index give the same pack.
ORDER BY score DESC, d.id LIMIT %(n)s
"""


@dataclass(frozen=True)
class Hit:
    id: str
    source: str
    kind: str
    table: str
    column: str | None
    score: float  # fused rank score: relative to the other hits only
    # Cosine distance of the document to the question (None: found by its words only). The one
    # absolute measure of how close a document is; the relevance floor reads it.
    distance: float | None = None


def ensure_schema(conn: psycopg.Connection[Any], dim: int) -> None:
    # CREATE INDEX IF NOT EXISTS takes its lock before it looks, and waits behind any writer
    # (another process indexing): an index already complete is left alone.
    if _schema_complete(conn):
        return
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    conn.execute(SCHEMA_SQL.replace("{dim}", str(int(dim))))
    conn.commit()


def _schema_complete(conn: psycopg.Connection[Any]) -> bool:
    row = conn.execute(
        "SELECT to_regclass('schemawise.index_vocabulary_prefix') IS NOT NULL"
        " AND to_regclass('schemawise.index_documents_source') IS NOT NULL"
        " AND to_regclass('schemawise.index_documents_hnsw') IS NOT NULL"
        " AND to_regclass('schemawise.index_documents_gin') IS NOT NULL"
        " AND to_regclass('schemawise.index_vocabulary_source') IS NOT NULL"
        " AND EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = 'schemawise'"
        " AND table_name = 'index_documents' AND column_name = 'schema_version')"
    ).fetchone()
    return bool(row and row[0])


@dataclass(frozen=True)
class WriteCounts:
    embedded: int  # new or changed documents, the only ones sent to the embedder
    removed: int
    unchanged: int


def replace_source(
    conn: psycopg.Connection[Any],
    source: str,
    docs: Sequence[Document],
    embedder: Embedder,
    version: str | None = None,
    progress: Callable[[str], None] | None = None,
    *,
    commit: bool = True,
) -> WriteCounts:
    """Write a source's documents, embedding only those whose text changed (by fingerprint),
    and stamp them all with the schema version they describe. With `commit=False` the caller
    commits (with what else belongs to the same change) and calls `tidy_after` itself."""
    register_vector(conn)
    existing = dict(
        conn.execute(
            "SELECT id, fingerprint FROM schemawise.index_documents WHERE source = %s", (source,)
        ).fetchall()
    )
    changed = [d for d in docs if existing.get(d.id) != d.fingerprint]
    keep = {d.id for d in docs}
    removed = [i for i in existing if i not in keep]
    if removed:
        conn.execute("DELETE FROM schemawise.index_documents WHERE id = ANY(%s)", (removed,))
    for start in range(0, len(changed), 512):
        if progress is not None:
            progress(f"embedding documents {start}/{len(changed)}")
        batch = changed[start : start + 512]
        vectors = embedder.embed([d.text for d in batch])
        with conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO schemawise.index_documents (id, source, kind, table_name, column_name, "
                "text, lexical, fingerprint, model, embedding) VALUES "
                "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO UPDATE SET "
                "text = EXCLUDED.text, lexical = EXCLUDED.lexical, "
                "fingerprint = EXCLUDED.fingerprint, "
                "model = EXCLUDED.model, embedding = EXCLUDED.embedding",
                [
                    (
                        d.id,
                        d.source,
                        d.kind,
                        d.table,
                        d.column,
                        d.text,
                        d.lexical,
                        d.fingerprint,
                        embedder.name,
                        np.asarray(v, dtype=np.float32),
                    )
                    for d, v in zip(batch, vectors, strict=True)
                ],
            )
    conn.execute(
        "UPDATE schemawise.index_documents SET schema_version = %s WHERE source = %s",
        (version, source),
    )
    if changed or removed:
        _count_vocabulary(conn, source)
    counts = WriteCounts(len(changed), len(removed), len(docs) - len(changed))
    if commit:
        conn.commit()
        tidy_after(conn, counts)
    return counts


def tidy_after(conn: psycopg.Connection[Any], counts: WriteCounts) -> None:
    """Vacuum and analyse after a large change (`RETRIEVAL.tidy_after` rewritten or removed
    documents), outside any transaction: dead rows left by re-indexing would otherwise make
    every search read more pages (autovacuum may lag)."""
    if counts.embedded + counts.removed >= RETRIEVAL.tidy_after:
        tidy(conn)


def _count_vocabulary(conn: psycopg.Connection[Any], source: str) -> None:
    conn.execute("DELETE FROM schemawise.index_vocabulary WHERE source = %s", (source,))
    documents = sql.SQL(
        "SELECT tsv FROM schemawise.index_documents WHERE source = {} AND kind <> 'ddl'"
    ).format(sql.Literal(source))
    conn.execute(
        "INSERT INTO schemawise.index_vocabulary (source, lexeme, documents) "
        "SELECT %s, word, ndoc FROM ts_stat(%s)",
        (source, documents.as_string(conn)),
    )


def remove_sources(conn: psycopg.Connection[Any], pattern: str) -> None:
    """Delete every document (and vocabulary) of the sources whose name is LIKE `pattern`."""
    conn.execute("DELETE FROM schemawise.index_documents WHERE source LIKE %s", (pattern,))
    conn.execute("DELETE FROM schemawise.index_vocabulary WHERE source LIKE %s", (pattern,))
    conn.commit()


def tidy(conn: psycopg.Connection[Any]) -> None:
    """VACUUM (ANALYZE) the document table: outside a transaction, so briefly autocommit."""
    previous = conn.autocommit
    conn.commit()
    conn.autocommit = True
    try:
        conn.execute("VACUUM (ANALYZE) schemawise.index_documents")
    finally:
        conn.autocommit = previous


def current_versions(conn: psycopg.Connection[Any]) -> dict[str, str]:
    """The schema version each registered source is at; documents stamped with any other
    version (a sync that stopped half-way) are not served."""
    exists = conn.execute("SELECT to_regclass('schemawise.index_sources') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return {}
    return dict(conn.execute("SELECT source, version FROM schemawise.index_sources").fetchall())


# Document frequencies by (sources, kinds, document count) and lexeme: a changed index has
# another document count, so stale entries are never read.
_DOCUMENT_FREQUENCY: dict[tuple[tuple[tuple[str, ...], tuple[str, ...], int], str], int] = {}


def lexical_terms(
    conn: psycopg.Connection[Any],
    text: str,
    sources: Sequence[str] | None,
    kinds: Sequence[str] | None = None,
) -> dict[str, float]:
    """The question's lexemes, each with its inverse document frequency, without the
    near-universal ones among the documents searched (these sources, these kinds: documents
    of another kind, such as a benchmark's DDL baselines, must not change what the context
    search matches)."""
    row = conn.execute(
        "SELECT array(SELECT DISTINCT unnest(tsvector_to_array(to_tsvector('english', %s))))",
        (text,),
    ).fetchone()
    lexemes = [t for t in (row[0] if row else []) if t]
    if not lexemes:
        return {}
    scope = (
        "(%(sources)s::text[] IS NULL OR source = ANY(%(sources)s))"
        " AND (%(kinds)s::text[] IS NULL OR kind = ANY(%(kinds)s))"
    )
    scoped = {
        "sources": list(sources) if sources else None,
        "kinds": list(kinds) if kinds else None,
    }
    total_row = conn.execute(
        f"SELECT count(*) FROM schemawise.index_documents WHERE {scope}", scoped
    ).fetchone()
    total = int(total_row[0]) if total_row else 0
    scope_key = (tuple(sorted(sources or ())), tuple(sorted(kinds or ())), total)
    unknown = [t for t in lexemes if (scope_key, t) not in _DOCUMENT_FREQUENCY]
    if unknown:
        # One statement counts every new word: a pass over the documents matching any of them
        # (through the GIN index), instead of one round trip per word.
        counts = ", ".join(
            f"count(*) FILTER (WHERE tsv @@ to_tsquery('english', quote_literal(%(w{i})s)))"
            for i in range(len(unknown))
        )
        params: dict[str, Any] = {f"w{i}": t for i, t in enumerate(unknown)} | scoped
        params["any"] = or_query(unknown)
        row = conn.execute(
            f"SELECT {counts} FROM schemawise.index_documents WHERE {scope} "
            "AND tsv @@ to_tsquery('english', %(any)s)",
            params,
        ).fetchone()
        if len(_DOCUMENT_FREQUENCY) > 100_000:
            _DOCUMENT_FREQUENCY.clear()
        for lexeme, count in zip(unknown, row or [0] * len(unknown), strict=True):
            _DOCUMENT_FREQUENCY[(scope_key, lexeme)] = int(count)
    frequency = {t: _DOCUMENT_FREQUENCY[(scope_key, t)] for t in lexemes}
    # A word found in more than `common_share` of the documents tells nothing apart (like
    # `attr` or `id` in a warehouse of generic names): it is left out of the lexical query,
    # which also keeps ranking cheap on large catalogs. Among a few documents (the DDL of a
    # five-table database) a share says nothing: a word in `common_at_least` of them or fewer
    # is not near-universal, and its weight tells it apart anyway.
    common = max(RETRIEVAL.common_share * total, RETRIEVAL.common_at_least)
    kept = [t for t in lexemes if frequency[t] <= common]
    # Ranking reads every matching document: past `max_lexical_matches` (the sum of the words'
    # document frequencies), the most common words go first (they tell the least apart),
    # which keeps the lexical side fast on big catalogs.
    kept.sort(key=lambda t: frequency[t])
    while len(kept) > 1 and sum(frequency[t] for t in kept) > RETRIEVAL.max_lexical_matches:
        kept.pop()
    return {t: _idf(total, frequency[t]) for t in kept or lexemes}


def _idf(total: int, frequency: int) -> float:
    """BM25's inverse document frequency: a word few documents have tells more."""
    return math.log((max(total, frequency) - frequency + 0.5) / (frequency + 0.5) + 1.0)


def or_query(terms: Sequence[str]) -> str:
    """The terms OR-ed together as tsquery text, each quoted."""
    return " | ".join("'" + t.replace("'", "''") + "'" for t in terms)


def documents_in(conn: psycopg.Connection[Any], sources: Sequence[str] | None) -> int:
    """How many documents the sources hold (None: the whole index)."""
    row = conn.execute(
        "SELECT count(*) FROM schemawise.index_documents "
        "WHERE %(sources)s::text[] IS NULL OR source = ANY(%(sources)s)",
        {"sources": list(sources) if sources else None},
    ).fetchone()
    return int(row[0]) if row else 0


def search_sql(exact: bool) -> sql.SQL:
    """The search, its nearest documents found exactly (an ordering the graph index cannot
    serve: the planner scans the sources' own documents) or through the graph index."""
    # The graph index serves an ordering by the distance alone; exactly, ties go by id.
    order = "(embedding <=> %(vector)s) + 0, id" if exact else "embedding <=> %(vector)s"
    return sql.SQL(SEARCH_SQL.replace("{dense_order}", order))


@contextmanager
def _graph_index_settings(conn: psycopg.Connection[Any], exact: bool) -> Iterator[None]:
    """The graph index's search settings for one query, put back after it: inside a caller's
    open transaction a SET LOCAL would otherwise last until that transaction ends."""
    if exact:
        yield
        return
    names = ("hnsw.ef_search", "hnsw.iterative_scan")
    before = [conn.execute("SELECT current_setting(%s)", (name,)).fetchone() for name in names]
    conn.execute("SET LOCAL hnsw.ef_search = 200")
    conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
    yield  # on an error the savepoint's rollback undoes the settings
    for name, row in zip(names, before, strict=True):
        if row is not None:
            conn.execute("SELECT set_config(%s, %s, true)", (name, row[0]))


def search(
    conn: psycopg.Connection[Any],
    text: str,
    vector: np.ndarray,
    *,
    kinds: Sequence[str] = ("table", "column"),
    sources: Sequence[str] | None = None,
    n: int = 100,
    dense_weight: float = 1.0,
    lexical_weight: float = 1.0,
) -> list[Hit]:
    register_vector(conn)
    terms = lexical_terms(conn, text, sources, kinds)
    versions = current_versions(conn)
    exact = documents_in(conn, sources) <= RETRIEVAL.exact_search_documents
    with conn.transaction(), _graph_index_settings(conn, exact):
        rows = conn.execute(
            search_sql(exact),
            {
                "lexemes": or_query(list(terms)),
                "terms": list(terms),
                "idfs": list(terms.values()),
                "versioned": list(versions),
                "versions": list(versions.values()),
                "vector": np.asarray(vector, dtype=np.float32),
                "kinds": list(kinds),
                "sources": list(sources) if sources else None,
                "n": n,
                "dense_weight": dense_weight,
                "lexical_weight": lexical_weight,
            },
        ).fetchall()
    return [
        Hit(r[0], r[1], r[2], r[3], r[4], float(r[5]), None if r[6] is None else float(r[6]))
        for r in rows
    ]


VOCABULARY_SQL = """
WITH q AS (SELECT DISTINCT unnest(tsvector_to_array(to_tsvector('english', %(text)s))) AS lexeme)
SELECT v.source, q.lexeme FROM q JOIN schemawise.index_vocabulary v USING (lexeme)
WHERE %(sources)s::text[] IS NULL OR v.source = ANY(%(sources)s)
UNION
-- A longer word of the same stem (citizen → citizenship): a range scan of the C-collated index.
SELECT v.source, q.lexeme FROM q JOIN schemawise.index_vocabulary v
  ON v.lexeme COLLATE "C" > q.lexeme COLLATE "C"
 AND v.lexeme COLLATE "C" < (q.lexeme || chr(1114111)) COLLATE "C"
WHERE length(q.lexeme) >= %(prefix)s
  AND (%(sources)s::text[] IS NULL OR v.source = ANY(%(sources)s))
"""


def lexemes(conn: psycopg.Connection[Any], text: str) -> set[str]:
    """The content words of `text` as the index stores words (Postgres' english lexemes: stop
    words out, stems in)."""
    row = conn.execute("SELECT tsvector_to_array(to_tsvector('english', %s))", (text,)).fetchone()
    return set(row[0]) if row and row[0] else set()


def word_lexemes(conn: psycopg.Connection[Any], words: Sequence[str]) -> dict[str, set[str]]:
    """Each word → its lexemes as the index stores words (none for a stop word)."""
    rows = conn.execute(
        "SELECT w, tsvector_to_array(to_tsvector('english', w)) FROM unnest(%s::text[]) AS w",
        (list(words),),
    ).fetchall()
    return {word: set(found or []) for word, found in rows}


def words_found(
    conn: psycopg.Connection[Any], text: str, sources: Sequence[str] | None
) -> dict[str, set[str]]:
    """Source → the lexemes of `text` that occur anywhere in its documents, or begin a word
    that does — a word of `RETRIEVAL.prefix_length` letters or more (`citizen` finds
    `citizenship`); shorter ones begin too many unrelated words."""
    found: dict[str, set[str]] = {}
    rows = conn.execute(
        VOCABULARY_SQL,
        {
            "text": text,
            "sources": list(sources) if sources else None,
            "prefix": RETRIEVAL.prefix_length,
        },
    ).fetchall()
    for source, lexeme in rows:
        found.setdefault(source, set()).add(lexeme)
    return found
