"""Golden sets: questions with gold SQL, from a user's YAML or JSONL file or from the Spider and
BIRD dev layouts, as one item type, so that one harness scores all three.

A file item::

    {id?, question, gold: str | [str, ...], database? | source?, evidence?,
     tables?: [...], columns?: [...], join_keys?: [...], rules?: [...]}

``gold`` may list several queries: a prediction matching any of them is right. ``database``
(or its synonym ``source``) is a SQLite or DuckDB file or URL, relative to the file's folder;
without it the item runs on the database the harness is given. ``tables``, ``columns``
(``table.column``) and ``join_keys`` (``a.x = b.y``) state what the gold query needs when
reading it from the SQL is not enough; ``rules`` are carried to the predictor as written.

A YAML file is a list of items, or a mapping with ``items`` and an optional ``database`` that
items without their own inherit. A JSONL file holds one item per line.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from schemawise.errors import GoldenSetError
from schemawise.eval.datasets import Dataset, database_path, load_examples

Origin = Literal["spider", "bird", "golden"]
HINT_FORMAT = (
    "Each item needs `question` and `gold` (one SQL string or a list of them); optional: "
    "`id`, `database` (or `source`), `evidence`, `tables`, `columns`, `join_keys`, `rules`."
)


ColumnRef = tuple[str, str]  # (table, column), lower case; table "" when not known


def parse_column(text: str) -> ColumnRef:
    """`table.column` (or a bare `column`) from a golden item, lower case."""
    table, _, column = text.strip().lower().rpartition(".")
    return table, column


class GoldenItem(BaseModel):
    """One question with its gold SQL and what the harness needs to score a prediction."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    question: str = Field(min_length=1)
    gold: tuple[str, ...] = Field(min_length=1)
    # Spider/BIRD: the db_id; a golden file: a path or URL as written (resolved by the loader
    # against the file's folder); None: the database the harness is given.
    database: str | None = None
    evidence: str = ""
    tables: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()
    join_keys: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _source_is_database(cls, data: Any) -> Any:
        """`source` is a synonym of `database` (the word the rest of schemawise uses)."""
        if isinstance(data, dict) and "source" in data:
            data = dict(data)
            source = data.pop("source")
            if data.get("database") not in (None, source):
                raise ValueError("give `database` or `source`, not two different ones")
            data["database"] = source
        return data

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("gold", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("gold")
    @classmethod
    def _no_empty_sql(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not sql.strip() for sql in value):
            raise ValueError("a gold query is empty")
        return value


def _describe(error: ValidationError) -> str:
    parts = []
    for problem in error.errors():
        where = ".".join(str(p) for p in problem["loc"]) or "item"
        parts.append(f"{where}: {problem['msg']}")
    return "; ".join(parts)


def _resolve_database(database: str | None, folder: Path) -> str | None:
    """A relative file path is relative to the golden file; URLs, absolute paths and the
    embedded server's databases (`embedded`, `embedded/<name>`) stay."""
    if database is None or "://" in database or Path(database).is_absolute():
        return database
    if database.lower() in ("embedded", "demo") or database.lower().startswith("embedded/"):
        return database
    return str((folder / database).resolve())


def _items(raw: Iterable[tuple[str, Any]], path: Path, default_db: str | None) -> list[GoldenItem]:
    """Validate (where, value) pairs into items with unique ids; `where` names the place in
    the file for messages (`line 3`, `item 2`)."""
    items: list[GoldenItem] = []
    seen: dict[str, str] = {}
    for index, (where, value) in enumerate(raw, start=1):
        if not isinstance(value, dict):
            raise GoldenSetError(
                f"{path}, {where}: expected a mapping, found {type(value).__name__}.", HINT_FORMAT
            )
        data = {"id": f"{path.stem}-{index}", **value}
        if default_db is not None and "database" not in data and "source" not in data:
            data["database"] = default_db
        try:
            item = GoldenItem.model_validate(data)
        except ValidationError as exc:
            raise GoldenSetError(f"{path}, {where}: {_describe(exc)}.", HINT_FORMAT) from None
        if item.id in seen:
            raise GoldenSetError(
                f"{path}, {where}: id {item.id!r} was already used at {seen[item.id]}.",
                "Give every item its own id, or leave ids out to number items by position.",
            )
        seen[item.id] = where
        database = _resolve_database(item.database, path.parent)
        items.append(item.model_copy(update={"database": database}))
    if not items:
        raise GoldenSetError(f"{path} holds no items.", HINT_FORMAT)
    return items


def _read_yaml(path: Path, text: str) -> list[GoldenItem]:
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise GoldenSetError(
            f"{path} is not valid YAML{where}: {getattr(exc, 'problem', None) or exc}.",
            "Check the indentation and quote SQL that holds `:` or `#`.",
        ) from None
    default_db = None
    if isinstance(document, dict):
        if "items" not in document:
            raise GoldenSetError(
                f"{path}: a mapping at the top needs an `items` list.",
                "Write a list of items, or `database: …` and `items: [...]`.",
            )
        unknown = set(document) - {"items", "database", "source"}
        if unknown:
            raise GoldenSetError(
                f"{path}: unknown top-level keys {sorted(unknown)}.",
                "At the top only `items` and `database` (or `source`) are read.",
            )
        default_db = document.get("database", document.get("source"))
        document = document["items"]
    if not isinstance(document, list):
        raise GoldenSetError(
            f"{path}: expected a list of items, found {type(document).__name__}.", HINT_FORMAT
        )
    return _items(((f"item {i}", v) for i, v in enumerate(document, 1)), path, default_db)


def _read_jsonl(path: Path, text: str) -> list[GoldenItem]:
    entries: list[tuple[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entries.append((f"line {number}", json.loads(line)))
        except json.JSONDecodeError as exc:
            raise GoldenSetError(
                f"{path}, line {number} is not JSON: {exc.msg} (column {exc.colno}).",
                "Write one JSON object per line (JSON Lines), with no line breaks inside one.",
            ) from None
    return _items(entries, path, None)


def load_golden(path: Path) -> list[GoldenItem]:
    """Read a golden set from a `.yaml`/`.yml` or `.jsonl`/`.json` file."""
    if not path.is_file():
        raise GoldenSetError(
            f"Golden set {path} not found.", "Give the path of a YAML or JSONL file."
        )
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise GoldenSetError(f"{path} is not UTF-8 text.", "Save the file as UTF-8.") from None
    suffix = path.suffix.lower()
    if suffix in {".yaml", ".yml"}:
        return _read_yaml(path, text)
    if suffix in {".jsonl", ".json", ".ndjson"}:
        return _read_jsonl(path, text)
    raise GoldenSetError(
        f"{path}: unknown golden set format {suffix or '(no suffix)'!r}.",
        "Name the file .yaml, .yml or .jsonl.",
    )


def load_benchmark(dataset: Dataset, data: Path) -> list[GoldenItem]:
    """Spider or BIRD dev questions as golden items; ids are `<dataset>-<position>` (from 0,
    the position in dev.json), so that a sample names the same questions in every run."""
    return [
        GoldenItem(
            id=f"{dataset}-{index}",
            question=example.question,
            gold=(example.sql,),
            database=example.db_id,
            evidence=example.evidence,
        )
        for index, example in enumerate(load_examples(dataset, data))
    ]


def sample(items: Sequence[GoldenItem], n: int | None, seed: int = 0) -> list[GoldenItem]:
    """`n` items chosen by `seed`, in their original order: the same call gives the same
    sample on every machine (random.Random is stable across platforms for a seed)."""
    if n is None or n >= len(items):
        return list(items)
    if n < 0:
        raise GoldenSetError(f"Cannot sample {n} items.", "Give a limit of 0 or more.")
    chosen = sorted(random.Random(seed).sample(range(len(items)), n))
    return [items[i] for i in chosen]


def sample_per_database(items: Sequence[GoldenItem], n: int, seed: int = 0) -> list[GoldenItem]:
    """At most `n` items of each database (seeded as `sample`), in their original order."""
    by_database: dict[str | None, list[int]] = defaultdict(list)
    for index, item in enumerate(items):
        by_database[item.database].append(index)
    rng = random.Random(seed)
    chosen: list[int] = []
    for database in sorted(by_database, key=lambda d: d or ""):
        indexes = by_database[database]
        chosen += indexes if len(indexes) <= n else rng.sample(indexes, n)
    return [items[i] for i in sorted(chosen)]


def databases_with_rows(dataset: Dataset, data: Path, db_ids: Iterable[str]) -> set[str]:
    """The databases holding at least one row: execution comparisons on an empty database
    only show that both queries run (Spider's wta_1, every BIRD dev database here)."""
    from schemawise.runner import load_graph

    found = set()
    for db_id in set(db_ids):
        path = database_path(dataset, data, db_id)
        graph = load_graph(f"sqlite:///{path}", data_checks=False)
        if any((table.row_count or 0) > 0 for table in graph.tables):
            found.add(db_id)
    return found


def with_rows(items: Sequence[GoldenItem], dataset: Dataset, data: Path) -> list[GoldenItem]:
    """The items whose database holds rows."""
    keep = databases_with_rows(dataset, data, (i.database for i in items if i.database))
    return [item for item in items if item.database in keep]
