"""The index's search over a few databases is exact (real embedded Postgres): its nearest
documents do not depend on the approximate graph index, nor on what else is indexed; over many
it takes the graph index, and puts its settings back."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest
from pgvector.psycopg import register_vector

from schemawise import api
from schemawise.index import store
from schemawise.index.embed import get_embedder


@pytest.fixture(scope="module")
def chinook(embedded_url: str, bench_dir: Path) -> str:
    api.index(f"sqlite:///{bench_dir / 'chinook' / 'chinook.sqlite'}", "chinook_exact",
              index_url=embedded_url)  # fmt: skip
    return "chinook_exact"


def _plan(conn: psycopg.Connection[Any], exact: bool, vector: np.ndarray) -> str:
    params = {
        "lexemes": "'track'", "terms": ["track"], "idfs": [1.0], "versioned": [], "versions": [],
        "vector": vector, "kinds": ["table", "column"], "sources": None, "n": 20,
        "dense_weight": 1.0, "lexical_weight": 1.0,
    }  # fmt: skip
    query = psycopg.sql.SQL("EXPLAIN ") + store.search_sql(exact)
    return "\n".join(r[0] for r in conn.execute(query, params).fetchall())


def test_the_exact_search_never_reads_the_graph_index(embedded_url: str, chinook: str) -> None:
    vector = np.asarray(get_embedder().embed(["tracks by AC/DC"])[0], dtype=np.float32)
    with psycopg.connect(embedded_url) as conn:
        register_vector(conn)
        with conn.transaction():
            # Every source searched, and every other plan made dear: the approximate search
            # takes the graph index, the exact one cannot.
            for plan in ("seqscan", "bitmapscan", "sort"):
                conn.execute(f"SET LOCAL enable_{plan} = off")
            assert "index_documents_hnsw" in _plan(conn, False, vector)
            assert "index_documents_hnsw" not in _plan(conn, True, vector)


def test_the_nearest_documents_are_the_exact_nearest(embedded_url: str, chinook: str) -> None:
    vector = np.asarray(get_embedder().embed(["tracks by AC/DC"])[0], dtype=np.float32)
    with psycopg.connect(embedded_url) as conn:
        register_vector(conn)
        hits = store.search(conn, "", vector, sources=[chinook], n=10)  # no words: dense only
        rows = conn.execute(
            "SELECT id, embedding FROM schemawise.index_documents "
            "WHERE source = %s AND kind = ANY(%s)", (chinook, ["table", "column"]),
        ).fetchall()  # fmt: skip
        assert conn.execute("SHOW enable_indexscan").fetchone() == ("on",)
    ids = [r[0] for r in rows]
    matrix = np.array([r[1].to_numpy() for r in rows], dtype=np.float64)
    cosine = matrix @ vector / (np.linalg.norm(matrix, axis=1) * np.linalg.norm(vector))
    nearest = [ids[i] for i in sorted(range(len(ids)), key=lambda i: (-cosine[i], ids[i]))[:10]]
    assert [h.id for h in hits] == nearest


def test_a_few_documents_are_searched_exactly_and_many_through_the_graph_index(
    embedded_url: str, chinook: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen: list[bool] = []
    real = store.search_sql

    def recorded(exact: bool) -> Any:
        chosen.append(exact)
        return real(exact)

    monkeypatch.setattr(store, "search_sql", recorded)
    vector = np.asarray(get_embedder().embed(["tracks"])[0], dtype=np.float32)
    with psycopg.connect(embedded_url) as conn:
        register_vector(conn)
        store.search(conn, "tracks", vector, sources=[chinook])
        monkeypatch.setattr(store, "RETRIEVAL", replace(store.RETRIEVAL, exact_search_documents=0))
        before = conn.execute("SHOW hnsw.ef_search").fetchone()
        store.search(conn, "tracks", vector, sources=[chinook])
        # Inside the caller's open transaction, the graph index's settings are put back.
        assert conn.execute("SHOW hnsw.ef_search").fetchone() == before
    assert chosen == [True, False]
