"""Hybrid row search in one SQL statement: dense (`<=>`) and lexical (`ts_rank_cd` over
`websearch_to_tsquery`) candidates, each filtered by tenant first, fused by reciprocal rank
fusion, cut by a calibrated distance threshold — so "nothing relevant" comes back empty."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql as pgsql

from schemawise.errors import SchemawiseError
from schemawise.index.embed import get_embedder
from schemawise.rows.config import RowsConfig
from schemawise.rows.enable import pgvector_support

Mode = Literal["hybrid", "dense", "lexical"]
RRF_K = 60


@dataclass
class SearchSettings:
    k: int = 20
    candidates: int = 100  # per ranking, before fusion
    ef_search: int = 100
    max_scan_tuples: int = 50_000
    mode: Mode = "hybrid"
    use_threshold: bool = True


@dataclass
class SearchResult:
    table: str
    query: str
    tenant: Any
    mode: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    threshold: float | None = None
    calibrated: bool = False
    empty_reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "query": self.query,
            "tenant": self.tenant,
            "mode": self.mode,
            "calibrated": self.calibrated,
            "threshold": self.threshold,
            "count": len(self.rows),
            "rows": self.rows,
            "empty_reason": self.empty_reason,
        }


def _filters(
    config: RowsConfig, tenant: Any, filters: dict[str, Any], columns: set[str]
) -> tuple[pgsql.Composable, dict[str, Any]]:
    """Tenant and equality filters, always as bound parameters (never text a model wrote)."""
    parts: list[pgsql.Composable] = [pgsql.SQL("TRUE")]
    params: dict[str, Any] = {}
    if config.tenant_column:
        if tenant is None:
            raise SchemawiseError(
                f"{config.table} is searched per tenant ({config.tenant_column}).",
                "Pass the caller's tenant, e.g. --tenant 42.",
            )
        parts.append(
            pgsql.SQL("{} = {}").format(
                pgsql.Identifier(config.tenant_column), pgsql.Placeholder("tenant")
            )
        )
        params["tenant"] = tenant
    for column, value in filters.items():
        if column not in columns or column.startswith("sw_"):
            raise SchemawiseError(
                f"Unknown filter column {column!r}.",
                f"Filter on one of: {', '.join(sorted(columns))}.",
            )
        name = f"filter_{len(params)}"
        parts.append(pgsql.SQL("{} = {}").format(pgsql.Identifier(column), pgsql.Placeholder(name)))
        params[name] = value
    return pgsql.SQL(" AND ").join(parts), params


# The stemmed query, or the words as typed: a query of stop words only ("you") is empty in the
# English configuration, and sw_tsv holds every word as written too (rows/enable.py).
_QUERY = "(websearch_to_tsquery('english', %(text)s) || websearch_to_tsquery('simple', %(text)s))"


def search_sql(
    config: RowsConfig,
    where: pgsql.Composable,
    settings: SearchSettings,
    threshold: float | None,
    gate: float | None = None,
) -> pgsql.Composed:
    """The one statement; named placeholders: vector, text, candidates, threshold, k, and the
    filter's own (tenant, filter_N)."""
    key = config.key()
    dense = pgsql.SQL(
        "SELECT {key} AS key, distance, row_number() OVER (ORDER BY distance) AS rank FROM ("
        "SELECT {key}, sw_embedding <=> %(vector)s AS distance FROM {table} "
        "WHERE sw_embedding IS NOT NULL AND {where} "
        "ORDER BY sw_embedding <=> %(vector)s LIMIT %(candidates)s) d"
    )
    lexical = pgsql.SQL(
        "SELECT {key} AS key, row_number() OVER (ORDER BY score DESC, {key}) AS rank FROM ("
        "SELECT {key}, ts_rank_cd(sw_tsv, " + _QUERY + ") AS score "
        "FROM {table} WHERE sw_tsv @@ " + _QUERY + " AND {where} "
        "ORDER BY score DESC LIMIT %(candidates)s) l"
    )
    empty = pgsql.SQL("SELECT NULL::{type} AS key, NULL::float8 AS distance, NULL::bigint AS rank "
                      "WHERE FALSE").format(type=pgsql.SQL(config.key_type))  # fmt: skip
    empty_lex = pgsql.SQL("SELECT NULL::{type} AS key, NULL::bigint AS rank WHERE FALSE").format(
        type=pgsql.SQL(config.key_type)
    )
    parts = {"key": key, "table": config.ref(), "where": where}
    dense_sql = dense.format(**parts) if settings.mode != "lexical" else empty
    lexical_sql = lexical.format(**parts) if settings.mode != "dense" else empty_lex
    # A row is kept when it is near enough in meaning, or matches the query's terms.
    conditions = []
    if threshold is not None:
        conditions.append(pgsql.SQL("(d.distance <= %(threshold)s OR l.key IS NOT NULL)"))
    if gate is not None:
        # Nothing relevant at all: the nearest row is too far and no row matches the terms.
        conditions.append(
            pgsql.SQL(
                "((SELECT min(distance) FROM dense) <= %(gate)s OR EXISTS (SELECT 1 FROM lexical))"
            )
        )
    keep = (
        pgsql.SQL("WHERE ") + pgsql.SQL(" AND ").join(conditions) if conditions else pgsql.SQL("")
    )
    return pgsql.SQL(
        "WITH dense AS ({dense}), lexical AS ({lexical}) "
        "SELECT coalesce(d.key, l.key) AS key, "
        "coalesce(1.0 / ({rrf} + d.rank), 0) + coalesce(1.0 / ({rrf} + l.rank), 0) AS score, "
        "d.distance, d.rank AS dense_rank, l.rank AS lexical_rank "
        "FROM dense d FULL OUTER JOIN lexical l ON l.key = d.key {keep} "
        "ORDER BY score DESC, d.distance NULLS LAST LIMIT %(k)s"
    ).format(dense=dense_sql, lexical=lexical_sql, rrf=pgsql.Literal(RRF_K), keep=keep)


def search(
    conn: psycopg.Connection[Any],
    config: RowsConfig,
    query: str,
    *,
    tenant: Any = None,
    filters: dict[str, Any] | None = None,
    settings: SearchSettings | None = None,
    vector: np.ndarray | None = None,
) -> SearchResult:
    settings = settings or SearchSettings()
    if not query.strip():
        raise SchemawiseError("The search text is empty.", "Say what to look for.")
    columns = {c for c in _columns(conn, config)}
    where, where_params = _filters(config, tenant, filters or {}, columns)
    if vector is None:
        vector = get_embedder(config.model).embed([query])[0]
    threshold = config.threshold if settings.use_threshold else None
    gate = config.gate if settings.use_threshold else None
    statement = search_sql(config, where, settings, threshold, gate)
    register_vector(conn)
    support = pgvector_support(conn)
    params: dict[str, Any] = {
        "vector": np.asarray(vector, dtype=np.float32),
        "text": query,
        "candidates": settings.candidates,
        "threshold": threshold,
        "gate": gate,
        "k": settings.k,
    }
    params.update(where_params)
    with conn.transaction():
        if support.iterative_scan:
            # Without these, a selective tenant filter applied after an HNSW scan keeps a
            # handful of its ef_search candidates and returns fewer than k rows.
            conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            conn.execute(pgsql.SQL("SET LOCAL hnsw.ef_search = {}").format(settings.ef_search))
            conn.execute(
                pgsql.SQL("SET LOCAL hnsw.max_scan_tuples = {}").format(settings.max_scan_tuples)
            )
        else:
            # pgvector < 0.8 cannot keep scanning: an exact scan is complete for selective filters.
            conn.execute("SET LOCAL enable_indexscan = off")
        rows = conn.execute(statement, params).fetchall()
    # After the scan settings above are gone (with `enable_indexscan` off, a lookup by key
    # would read the whole table).
    texts = _texts(conn, config, [r[0] for r in rows])
    result = SearchResult(
        table=config.table, query=query, tenant=tenant, mode=settings.mode,
        threshold=threshold, calibrated=config.calibrated,
    )  # fmt: skip
    result.rows = [
        {
            "key": r[0],
            "score": round(float(r[1]), 6),
            "distance": None if r[2] is None else round(float(r[2]), 4),
            "dense_rank": r[3],
            "lexical_rank": r[4],
            "text": texts.get(r[0], {}),
        }
        for r in rows
    ]
    if not result.rows:
        result.empty_reason = (
            "no row matches the query's terms or lies within the distance threshold"
            if threshold is not None
            else "no row matches"
        )
    return result


# How much of each matched text column a hit carries: enough to see why it matched.
TEXT_CHARS = 300


def _texts(
    conn: psycopg.Connection[Any], config: RowsConfig, keys: list[Any]
) -> dict[Any, dict[str, str | None]]:
    """The text columns of the rows found (what the search matched), each cut at TEXT_CHARS:
    a person reads why a row came back, not only its key."""
    if not keys:
        return {}
    columns = pgsql.SQL(", ").join(
        pgsql.SQL("left({}::text, %(chars)s)").format(pgsql.Identifier(c))
        for c in config.text_columns
    )
    statement = pgsql.SQL(
        "SELECT {key}, {columns} FROM {table} WHERE {key} = ANY(%(keys)s)"
    ).format(key=config.key(), columns=columns, table=config.ref())
    found = conn.execute(statement, {"keys": keys, "chars": TEXT_CHARS}).fetchall()
    return {row[0]: dict(zip(config.text_columns, row[1:], strict=True)) for row in found}


def _columns(conn: psycopg.Connection[Any], config: RowsConfig) -> list[str]:
    rows = conn.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 "
        "AND NOT attisdropped",
        (config.table,),
    ).fetchall()
    return [r[0] for r in rows]
