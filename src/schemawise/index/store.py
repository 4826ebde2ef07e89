"""The schema index in Postgres: documents with a tsvector and a pgvector column, searched by
one SQL statement that fuses the lexical and dense rankings (reciprocal rank fusion)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from schemawise.index.cards import Document
from schemawise.index.embed import Embedder

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
"""

SEARCH_SQL = """
WITH q AS (
    SELECT nullif(replace(plainto_tsquery('english', %(text)s)::text, '&', '|'), '')::tsquery AS query
), dense AS (
    SELECT id, row_number() OVER (ORDER BY distance) AS rank FROM (
        SELECT id, embedding <=> %(vector)s AS distance FROM schemawise.index_documents
        WHERE kind = ANY(%(kinds)s) AND (%(sources)s::text[] IS NULL OR source = ANY(%(sources)s))
        ORDER BY embedding <=> %(vector)s LIMIT %(n)s) d
), lexical AS (
    SELECT id, row_number() OVER (ORDER BY score DESC, id) AS rank FROM (
        SELECT id, ts_rank_cd(tsv, q.query) AS score FROM schemawise.index_documents, q
        WHERE q.query IS NOT NULL AND tsv @@ q.query AND kind = ANY(%(kinds)s)
          AND (%(sources)s::text[] IS NULL OR source = ANY(%(sources)s))
        ORDER BY score DESC LIMIT %(n)s) l
)
SELECT d.id, d.source, d.kind, d.table_name, d.column_name,
       coalesce(1.0 / (60 + dense.rank), 0) * %(dense_weight)s
       + coalesce(1.0 / (60 + lexical.rank), 0) * %(lexical_weight)s AS score
FROM dense FULL OUTER JOIN lexical ON lexical.id = dense.id
JOIN schemawise.index_documents d ON d.id = coalesce(dense.id, lexical.id)
ORDER BY score DESC LIMIT %(n)s
"""


@dataclass(frozen=True)
class Hit:
    id: str
    source: str
    kind: str
    table: str
    column: str | None
    score: float


def ensure_schema(conn: psycopg.Connection[Any], dim: int) -> None:
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    conn.execute(SCHEMA_SQL.replace("{dim}", str(int(dim))))
    conn.commit()


@dataclass(frozen=True)
class WriteCounts:
    embedded: int  # new or changed documents, the only ones sent to the embedder
    removed: int
    unchanged: int


def replace_source(
    conn: psycopg.Connection[Any], source: str, docs: Sequence[Document], embedder: Embedder
) -> WriteCounts:
    """Write a source's documents, embedding only those whose text changed (by fingerprint)."""
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
    conn.commit()
    return WriteCounts(len(changed), len(removed), len(docs) - len(changed))


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
    with conn.transaction():
        conn.execute("SET LOCAL hnsw.ef_search = 200")
        conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        rows = conn.execute(
            SEARCH_SQL,
            {
                "text": text,
                "vector": np.asarray(vector, dtype=np.float32),
                "kinds": list(kinds),
                "sources": list(sources) if sources else None,
                "n": n,
                "dense_weight": dense_weight,
                "lexical_weight": lexical_weight,
            },
        ).fetchall()
    return [Hit(r[0], r[1], r[2], r[3], r[4], float(r[5])) for r in rows]
