"""Spider 2.0-lite in the compacted linking layout (`databases.jsonl[.gz]` + `questions.jsonl`):
catalogs without data (BigQuery, Snowflake and SQLite schemas as JSON), table and column
descriptions, up to two sample rows per table, and questions with their gold tables."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schemawise.db.base import Catalog, QueryFailedError, Source
from schemawise.errors import BenchmarkDataError
from schemawise.graph.extract import ExtractOptions, extract_graph
from schemawise.graph.families import family_table, group_families
from schemawise.graph.model import Column, SchemaGraph, Table

# Sample values longer than this are cut: they are for recognising a value, not reading it.
SAMPLE_CHARS = 40


@dataclass
class Spider2Database:
    db_id: str
    engine: str
    graph: SchemaGraph  # sharded families already collapsed into one entry each
    tables: list[Table] = field(default_factory=list)  # every table, as listed
    # `table.column` (lower case) → description / sample values, as the index takes them.
    descriptions: dict[str, str] = field(default_factory=dict)
    samples: dict[str, list[str]] = field(default_factory=dict)
    about: dict[str, str] = field(default_factory=dict)  # table (lower case) → description


@dataclass(frozen=True)
class Spider2Question:
    instance_id: str
    db_id: str
    question: str
    knowledge: str
    gold_tables: frozenset[str]


class CatalogSource(Source):
    """A source known only by its catalog: no rows to check, so nothing is measured."""

    def __init__(self, catalog: Catalog, dialect: str, display_url: str) -> None:
        super().__init__()
        self._catalog = catalog
        self.dialect = dialect
        self.display_url = display_url

    def read_catalog(self) -> Catalog:
        return self._catalog

    def query(
        self, sql: str, params: Sequence[Any] = (), timeout_ms: int = 5000
    ) -> list[tuple[Any, ...]]:
        raise QueryFailedError("this source has a catalog and no data")

    def close(self) -> None:
        pass


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def _find(data: Path, stem: str) -> Path:
    for candidate in (data / f"{stem}.jsonl", data / f"{stem}.jsonl.gz"):
        if candidate.is_file():
            return candidate
    raise BenchmarkDataError(
        f"No {stem}.jsonl[.gz] in {data}.",
        "Give --data the Spider 2.0 linking folder, e.g. ../shared/bench/spider2-linking.",
    )


def _sample_text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text[:SAMPLE_CHARS] if text else None


_DIALECTS = {"bigquery": "bigquery", "snowflake": "snowflake", "sqlite": "sqlite"}


def database(raw: dict[str, Any]) -> Spider2Database:
    """One database's graph (names inferred joins where names allow, nothing measured) and
    the descriptions and sample values it ships."""
    tables: list[Table] = []
    descriptions: dict[str, str] = {}
    samples: dict[str, list[str]] = {}
    about: dict[str, str] = {}
    listed = [*raw.get("tables", []), *(raw.get("tables_without_column_info") or [])]
    for item in listed:
        name = item["name"]
        columns = [
            Column(name=c["name"], type=c.get("type") or "", comment=c.get("description"))
            for c in item.get("columns", [])
        ]
        comment = item.get("table_description") or item.get("description")
        tables.append(Table(name=name, columns=columns, comment=comment))
        if comment:
            about[name.lower()] = comment
        for column in item.get("columns", []):
            if column.get("description"):
                descriptions[f"{name}.{column['name']}".lower()] = column["description"]
        for row in item.get("sample_rows") or []:
            for column_name, value in row.items():
                text = _sample_text(value)
                key = f"{name}.{column_name}".lower()
                if text is not None and text not in samples.get(key, []):
                    samples.setdefault(key, []).append(text)
    dialect = _DIALECTS.get(str(raw.get("engine", "")).lower(), "")
    # Families collapse before inference: 366 shards of one table would otherwise cost
    # 366 times the join inference and say nothing more.
    entries = [g[0] if len(g) == 1 else family_table(g) for g in group_families(tables)]
    source = CatalogSource(Catalog(tables=entries), dialect, f"spider2/{raw['db_id']}")
    graph = extract_graph(source, ExtractOptions(data_checks=False))
    return Spider2Database(raw["db_id"], dialect, graph, tables, descriptions, samples, about)


def load_questions(data: Path) -> list[Spider2Question]:
    return [
        Spider2Question(
            instance_id=q["instance_id"],
            db_id=q["db_id"],
            question=q["question"],
            knowledge=q.get("external_knowledge") or "",
            gold_tables=frozenset(q["gold_tables"]),
        )
        for q in _lines(_find(data, "questions"))
        if q.get("gold_tables")
    ]


def load_databases(data: Path, db_ids: set[str] | None = None) -> dict[str, Spider2Database]:
    return {
        raw["db_id"]: database(raw)
        for raw in _lines(_find(data, "databases"))
        if db_ids is None or raw["db_id"] in db_ids
    }
