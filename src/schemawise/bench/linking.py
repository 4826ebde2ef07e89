"""`bench linking`: schema linking on Spider dev, BIRD dev and Spider 2.0-lite — does the
context pack hold every gold table and column, and how small is it — beside the usual tools'
approach (one DDL document per listed table, top-k by BM25, dense, and fused), on the same
index in the same run."""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import psycopg
import sqlglot
from pgvector.psycopg import register_vector
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import traverse_scope

from schemawise.bench.scratch import scratch_database
from schemawise.bench.timing import percentiles
from schemawise.db import Source, connect
from schemawise.db.sqlite import SQLiteSource
from schemawise.db.urls import parse_url
from schemawise.enrich.apply import about_tables
from schemawise.enrich.apply import descriptions as describe_columns
from schemawise.enrich.dictionary import from_description_csvs, from_tables_json
from schemawise.enrich.generated import Describe, describe_tables
from schemawise.enrich.metadata import Metadata
from schemawise.enrich.profile import ColumnProfile, profile_source
from schemawise.errors import GoldenSetError, SchemawiseError
from schemawise.eval import spider2
from schemawise.eval.datasets import Dataset, Example, database_path, load_examples
from schemawise.eval.golden import GoldenItem, load_golden, parse_column
from schemawise.graph.extract import ExtractOptions, extract_graph
from schemawise.graph.families import collapsed
from schemawise.graph.model import SchemaGraph, Table
from schemawise.index import store
from schemawise.index.cards import Document, documents, words
from schemawise.index.embed import get_embedder
from schemawise.index.sources import (
    default_name,
    descriptions_cache,
    metadata_documents,
    read_enriched,
    sample_values,
    seen_values,
    team_metadata,
)
from schemawise.prune.columns import join_keys_of, kept_keys
from schemawise.retrieve.context import ContextPack, ContextSettings, build_context
from schemawise.retrieve.relevance import DEFAULT_FLOOR
from schemawise.retrieve.source_choice import SourcePicker
from schemawise.validate.resolve import find_table, resolve

KS = (1, 3, 5, 10)
BenchDataset = Literal["spider", "bird", "spider2", "golden"]


def gold_links(
    sql: str, graph: SchemaGraph, dialect: str = "sqlite"
) -> tuple[set[str], set[tuple[str, str]]] | None:
    """Tables and (table, column) pairs a gold query uses, resolved against the graph."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except SqlglotError:
        return None
    if not isinstance(tree, exp.Expression):
        return None
    resolution = resolve(tree, graph)
    if resolution.tree is None or resolution.problems:
        return None
    tables = {t.lower() for t in resolution.tables}
    columns: set[tuple[str, str]] = set()
    for scope in traverse_scope(resolution.tree):
        aliases = {
            alias: find_table(graph, node)
            for alias, (_, node) in scope.selected_sources.items()
            if isinstance(node, exp.Table)
        }
        for column in scope.columns:
            table = aliases.get(column.table)
            if table is not None and table.column(column.name) is not None:
                columns.add((table.name.lower(), column.name.lower()))
    return tables, columns


@dataclass
class BenchDatabase:
    graph: SchemaGraph
    descriptions: dict[str, str] = field(default_factory=dict)
    about: dict[str, str] = field(default_factory=dict)
    samples: dict[str, list[str]] = field(default_factory=dict)
    # The tables as listed (before sharded families collapse): what the baselines index.
    listed: list[Table] = field(default_factory=list)
    meta: Metadata = field(default_factory=Metadata)
    dialect: str = "sqlite"  # the gold queries' SQL


@dataclass(frozen=True)
class Case:
    db_id: str
    question: str
    evidence: str
    gold_tables: frozenset[str]  # lower case
    gold_columns: frozenset[tuple[str, str]] | None  # None: the dataset gives no columns
    id: str = ""  # a golden item's id (the shared sets are numbered by position)


def ddl_document(source: str, table: Table) -> Document:
    cols = ", ".join(f"{c.name} {c.type}" for c in table.columns)
    text = f"CREATE TABLE {table.name} ({cols})"
    lexical = f"{words(table.name)} {' '.join(words(c.name) for c in table.columns)}"
    return Document(
        id=f"{source}:ddl:{table.name}", source=source, kind="ddl", table=table.name,
        column=None, text=text, lexical=lexical,
        fingerprint=hashlib.sha256(text.encode()).hexdigest()[:16],
    )  # fmt: skip


def load_reworded(path: Path) -> dict[int, str]:
    """A reworded question set: JSONL of {number, question}, `number` the question's 0-based
    position in the dataset's file (its gold query stays the gold)."""
    reworded: dict[int, str] = {}
    for line_number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            reworded[int(entry["number"])] = str(entry["question"])
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            raise SchemawiseError(
                f"{path}:{line_number} is not a reworded question.",
                'Each line is {"number": 7, "question": "…"}: the position in the dataset and '
                "the new wording.",
            ) from None
    return reworded


def _spider_or_bird(
    dataset: Dataset, data: Path, limit: int | None, reworded: dict[int, str] | None = None
) -> tuple[dict[str, BenchDatabase], list[Case], int]:
    every: list[Example] = load_examples(dataset, data)
    if reworded is None:
        examples = every[:limit]
        asked = examples
    else:
        # Every database of the dataset is indexed; only the reworded questions are asked.
        missing = [n for n in reworded if not 0 <= n < len(every)]
        if missing:
            raise SchemawiseError(
                f"Reworded question numbers outside the dataset: {missing[:5]}.",
                f"Numbers are 0-based positions among its {len(every)} questions.",
            )
        examples = every
        asked = [replace(every[n], question=q) for n, q in sorted(reworded.items())][:limit]
    databases: dict[str, BenchDatabase] = {}
    tables_file = data / ("tables.json" if dataset == "spider" else "dev_tables.json")
    for db_id in sorted({e.db_id for e in examples}):
        path = database_path(dataset, data, db_id)
        # The readable column names the dataset ships, and BIRD's description CSVs when
        # present: the data dictionary a team would give the index.
        descriptions = from_tables_json(tables_file, db_id) if tables_file.is_file() else {}
        descriptions.update(from_description_csvs(path.parent / "database_description"))
        with SQLiteSource(str(path)) as source:
            databases[db_id] = read_database(source, descriptions)
    cases, skipped = [], 0
    for example in asked:
        gold = gold_links(example.sql, databases[example.db_id].graph)
        if gold is None or not gold[0]:
            skipped += 1
            continue
        cases.append(
            Case(example.db_id, example.question, example.evidence,
                 frozenset(gold[0]), frozenset(gold[1]))
        )  # fmt: skip
    return databases, cases, skipped


def read_database(source: Source, descriptions: dict[str, str] | None = None) -> BenchDatabase:
    """A database as `index` reads it: its graph (joins checked on the data) and profiles."""
    graph = extract_graph(source, ExtractOptions(budget_seconds=20))
    meta = Metadata(profiles=profile_source(source, graph))
    return BenchDatabase(
        graph, descriptions or {}, samples=sample_values(meta), listed=graph.tables, meta=meta,
        dialect=source.dialect,
    )  # fmt: skip


def _golden(
    golden: Path, default: str | None, limit: int | None, given: Metadata | None = None
) -> tuple[dict[str, BenchDatabase], list[Case], list[dict[str, str]]]:
    """A golden set in `eval`'s format (question, gold SQL, and optionally the database and the
    tables or columns the answer needs) on the databases its items name, else `default`: any
    database `index` reads, Postgres included (no SQL is run, only the schema and profiles),
    read with the team's metadata (`given`: dbt, overlay) as `index` reads it. Also the items
    left out, each with why."""
    items = load_golden(golden)[:limit]
    names: dict[str, str] = {}  # a database, however written (`same_database`) → its db_id
    located: dict[str, str] = {}  # the key → the location as first written, to connect to
    for item in items:
        location = item.database or default
        if location is None:
            raise GoldenSetError(
                f"Item {item.id!r} names no database and none was given.",
                "Add `database:` to the item or the file, or give one with --data (a path or URL).",
            )
        key = same_database(location)
        if key not in names:
            name, taken = default_name(location), set(names.values())
            names[key] = next(
                n for n in (name, *(f"{name}_{i}" for i in range(2, 10_000))) if n not in taken
            )
            located[key] = location
    databases: dict[str, BenchDatabase] = {}
    for key, db_id in names.items():
        with connect(located[key]) as source:
            graph, meta = read_enriched(source, given or Metadata(), budget_seconds=20)
        databases[db_id] = BenchDatabase(
            graph, describe_columns(graph, meta), about_tables(graph, meta), sample_values(meta),
            listed=graph.tables, meta=meta, dialect=source.dialect,
        )  # fmt: skip
    cases: list[Case] = []
    skipped: list[dict[str, str]] = []
    for item in items:
        db_id = names[same_database(item.database or default or "")]
        database = databases[db_id]
        gold = gold_links(item.gold[0], database.graph, database.dialect)
        columns = _stated_columns(item, database.graph)
        tables = _stated_tables(item, database.graph) or {t for t, _ in columns or ()}
        if not tables and gold is not None:
            tables, columns = gold[0], columns if columns is not None else gold[1]
        if not tables:
            skipped.append({"id": item.id, "reason": (
                "its first gold query does not resolve against the database, and it states no "
                "tables (`schemawise check DB --sql …` says why)"
            )})  # fmt: skip
            continue
        if columns is not None and (outside := sorted({t for t, _ in columns} - tables)):
            raise GoldenSetError(
                f"Item {item.id!r} states columns of tables it does not need: "
                f"{', '.join(outside)}.",
                "Add those tables to `tables:`, or take the columns out.",
            )
        cases.append(
            Case(db_id, item.question, item.evidence, frozenset(tables),
                 frozenset(columns) if columns is not None else None, id=item.id)
        )  # fmt: skip
    return databases, cases, skipped


def same_database(location: str) -> str:
    """One key for a database however it is written: `chinook.sqlite`, `sqlite:///chinook.sqlite`
    and the absolute path are one file."""
    parsed = parse_url(location)
    if parsed.kind in ("sqlite", "duckdb"):
        return f"{parsed.kind}:{Path(parsed.target).resolve()}"
    return f"{parsed.kind}:{parsed.target}"


def _stated_tables(item: GoldenItem, graph: SchemaGraph) -> set[str]:
    """The tables an item states its answer needs (lower case), each checked against the graph:
    a misspelt table would otherwise count as a miss of every pack."""
    known = {t.name.lower() for t in graph.tables}
    stated = {t.lower() for t in item.tables}
    unknown = sorted(stated - known)
    if unknown:
        raise GoldenSetError(
            f"Item {item.id!r} states tables its database does not have: {', '.join(unknown)}.",
            "Write them as `schemawise graph` names them (schema.table where there are schemas).",
        )
    return stated


def _stated_columns(item: GoldenItem, graph: SchemaGraph) -> set[tuple[str, str]] | None:
    """The `table.column` pairs an item states (lower case), each checked against the graph;
    None when it states none. A bare column names no table a pack is measured on: ignored."""
    stated = {(t, c) for t, c in map(parse_column, item.columns) if t}
    if not stated:
        return None
    known = {(t.name.lower(), c.name.lower()) for t in graph.tables for c in t.columns}
    unknown = sorted(f"{t}.{c}" for t, c in stated - known)
    if unknown:
        raise GoldenSetError(
            f"Item {item.id!r} states columns its database does not have: {', '.join(unknown)}.",
            "Write them as table.column, as `schemawise graph` names them.",
        )
    return stated


# External knowledge documents run to thousands of words; the start says what they are about.
KNOWLEDGE_CHARS = 1500


def _spider2(data: Path, limit: int | None) -> tuple[dict[str, BenchDatabase], list[Case], int]:
    questions = spider2.load_questions(data)[:limit]
    raw = spider2.load_databases(data, {q.db_id for q in questions})
    databases = {
        db_id: BenchDatabase(
            d.graph,
            d.descriptions,
            d.about,
            d.samples,
            d.tables,
            Metadata(profiles={k: ColumnProfile(samples=v) for k, v in d.samples.items()}),
        )
        for db_id, d in raw.items()
    }
    cases, skipped = [], 0
    for q in questions:
        if q.db_id not in databases:
            skipped += 1
            continue
        cases.append(
            Case(q.db_id, q.question, q.knowledge[:KNOWLEDGE_CHARS],
                 frozenset(t.lower() for t in q.gold_tables), None)
        )  # fmt: skip
    return databases, cases, skipped


def missed_causes(pack: ContextPack, missed: set[str], right_db: bool) -> dict[str, str]:
    """Each gold table the pack lacks (lower case) → why: the empty pack, another database
    chosen, the cause of a candidate left out (rank/structural.py `LeftOut`, in the pack's
    `passed_over`), or `unmatched` for a table no document of the search matched."""
    if not pack.tables:
        return dict.fromkeys(missed, "empty")
    if not right_db:
        return dict.fromkeys(missed, "database")
    left_out = {t.name.lower(): t.left_out or "" for t in pack.passed_over}
    return {t: left_out.get(t, "unmatched") for t in sorted(missed)}


def _keys_of(
    graph: SchemaGraph, tables: list[str], paths: list[dict[str, Any]]
) -> set[tuple[str, str]]:
    """Lower-cased: the keys a pack of these tables holds whatever the question asks."""
    keys = kept_keys(graph, tables, join_keys_of(paths))
    return {(table.lower(), column.lower()) for table, column in keys}


def _entry_of(graph: SchemaGraph) -> dict[str, str]:
    """Every listed table (lower case) → the entry retrieval sees: itself, or its family."""
    entries: dict[str, str] = {}
    for table in collapsed(graph).tables:
        for name in table.shards or [table.name]:
            entries[name.lower()] = table.name.lower()
    return entries


Half = Literal["all", "even", "odd"]
# Given the pooled graphs by source name, a picker among close databases (bench --union only).
PickerFactory = Callable[[dict[str, SchemaGraph]], SourcePicker]
OFF_TOPIC = Path(__file__).with_name("off_topic.txt")


def described(name: str, database: BenchDatabase, describe: Describe,
              say: Callable[[str], None]) -> None:  # fmt: skip
    """The model's descriptions of the database's tables, in its metadata (the rerank reads
    a table's other names there) and on its cards, as `index --describe` puts them."""
    generated = describe_tables(database.graph, database.meta, database.samples, describe,
                                cache=descriptions_cache(name), say=say)  # fmt: skip
    database.meta = database.meta.merge(Metadata(tables=generated))
    # Beside what the dataset already says about a table (Spider 2.0's notes), not instead.
    for table, text in about_tables(database.graph, database.meta).items():
        before = database.about.get(table)
        if before and text in before:
            continue
        database.about[table] = f"{before} {text}" if before else text


def off_topic_questions() -> list[str]:
    lines = OFF_TOPIC.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def in_half(number: int, half: Half) -> bool:
    """Questions split by position (0-based): tune on one half, report both."""
    return half == "all" or number % 2 == (0 if half == "even" else 1)


def _measures(pack: ContextPack) -> dict[str, Any] | None:
    return pack.relevance.model_dump() if pack.relevance else None


def run(
    dataset: BenchDataset,
    data: Path | str | None,
    *,
    golden: Path | None = None,
    dbt: Path | None = None,
    overlay: Path | None = None,
    union: bool = False,
    limit: int | None = None,
    baselines: bool = True,
    half: Half = "all",
    items: Path | None = None,
    relevance_floor: bool = True,
    shared_documents: int | None = None,
    reworded: Path | None = None,
    lexicon: bool | None = None,
    describe: Describe | None = None,
    pick_source: PickerFactory | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The benchmark's documents live in a scratch database: the user's index is untouched.
    `half`: only the even- or odd-numbered questions (after `limit`); `items`: a JSONL file
    of every question's outcome and relevance measures, off-topic questions included;
    `describe`: a model describes each table first, as `index --describe` does (the replies
    are kept per database, table and instructions: a second run asks the model nothing new);
    `pick_source`: given the pooled graphs, a picker that chooses among close databases (the
    assistant's model: agent/rank.py `source_picker`). `golden`: with `dataset` "golden", the
    golden set (`eval`'s format), `data` then the database of items that name none, and `dbt`
    and `overlay` the team's files, read with each of its databases as `index` reads them."""
    with scratch_database(f"linking_{dataset}") as url:
        return _run(
            url, dataset, data, golden=golden, dbt=dbt, overlay=overlay, union=union, limit=limit,
            baselines=baselines, half=half, items=items, relevance_floor=relevance_floor,
            shared_documents=shared_documents,
            reworded=reworded, lexicon=lexicon, describe=describe, pick_source=pick_source,
            progress=progress,
        )  # fmt: skip


def _run(
    url: str,
    dataset: BenchDataset,
    data: Path | str | None,
    *,
    golden: Path | None = None,
    dbt: Path | None = None,
    overlay: Path | None = None,
    union: bool = False,
    limit: int | None = None,
    baselines: bool = True,
    half: Half = "all",
    items: Path | None = None,
    relevance_floor: bool = True,
    shared_documents: int | None = None,
    reworded: Path | None = None,
    lexicon: bool | None = None,
    describe: Describe | None = None,
    pick_source: PickerFactory | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    say = progress or (lambda _: None)
    settings = ContextSettings(
        relevance_floor=DEFAULT_FLOOR if relevance_floor else None, lexicon=lexicon
    )
    if shared_documents is not None:
        settings.shared_documents = shared_documents
    # Every candidate left out, so that each missed gold table gets its cause (`missed_why`).
    settings.passed_over = 10_000
    embedder = get_embedder()
    say("reading databases")
    if golden is not None and dataset != "golden":
        raise SchemawiseError(
            "A golden set is measured with --dataset golden.",
            "Use --dataset golden --golden FILE, or leave --golden out for a shared benchmark.",
        )
    if (dbt or overlay) and dataset != "golden":
        raise SchemawiseError(
            "A dbt project or an overlay is read with a golden set of your own.",
            "Use --dataset golden --golden FILE; the shared benchmarks ship no team files.",
        )
    if reworded is not None and dataset not in ("spider", "bird"):
        raise SchemawiseError(
            "Reworded questions are for Spider and BIRD.", "Use --dataset spider or bird."
        )
    unread: list[dict[str, str]] = []  # a golden set's items left out, each with why
    if dataset == "golden":
        if golden is None:
            raise GoldenSetError(
                "No golden set given.", "Give the YAML or JSONL file of questions with --golden."
            )
        given = team_metadata(dbt, overlay)
        databases, cases, unread = _golden(golden, str(data) if data else None, limit, given)
        skipped = len(unread)
    elif data is None:
        raise SchemawiseError(
            f"No {dataset} folder given.", "Give it with --data, e.g. ../shared/bench/spider."
        )
    elif dataset == "spider2":
        databases, cases, skipped = _spider2(Path(data), limit)
    else:
        wording = load_reworded(reworded) if reworded is not None else None
        databases, cases, skipped = _spider_or_bird(dataset, Path(data), limit, wording)
    if not databases:
        raise SchemawiseError(
            "No question to ask: the set, its limit or its half leaves none.",
            "Give --limit a positive number, or check the set's questions.",
        )
    if describe is not None:
        for db_id, database in databases.items():
            described(f"{dataset}/{db_id}", database, describe, say)
    numbered = [(n, c) for n, c in enumerate(cases) if in_half(n, half)]
    written: list[dict[str, Any]] = []
    graphs = {db_id: d.graph for db_id, d in databases.items()}
    started = time.perf_counter()
    with psycopg.connect(url) as conn:
        store.ensure_schema(conn, embedder.dim)
        say("indexing")
        indexed = 0
        for db_id, database in databases.items():
            name = f"{dataset}/{db_id}"
            docs = documents(
                name, database.graph, database.descriptions, database.about, database.samples,
                seen_values(database.meta),
            )  # fmt: skip
            # The team's examples, definitions and jargon (a golden set's --overlay, --dbt).
            docs += metadata_documents(name, database.graph, database.meta)
            if baselines:
                docs += [ddl_document(name, t) for t in database.listed]
            indexed += store.replace_source(conn, name, docs, embedder).embedded
        index_seconds = time.perf_counter() - started
        register_vector(conn)
        pooled = [f"{dataset}/{db_id}" for db_id in graphs]
        named = {f"{dataset}/{k}": v for k, v in graphs.items()}
        if pick_source is not None and union:
            settings.source_picker = pick_source(named)
        metadata = {f"{dataset}/{k}": d.meta for k, d in databases.items()}
        entries = {db_id: _entry_of(graph) for db_id, graph in graphs.items()}
        rows: list[dict[str, Any]] = []
        baseline_hits: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
        latencies: list[float] = []
        for done, (number, case) in enumerate(numbered):
            if done % 200 == 0:
                say(f"question {done}/{len(numbered)}")
            graph = collapsed(graphs[case.db_id])
            # Pooled: every database of the dataset, and no hint which one the question is about.
            sources = pooled if union else [f"{dataset}/{case.db_id}"]
            began = time.perf_counter()
            pack = build_context(
                conn, case.question, named, embedder, evidence=case.evidence, sources=sources,
                metadata=metadata, settings=settings,
            )  # fmt: skip
            latencies.append(time.perf_counter() - began)
            right_db = pack.source == f"{dataset}/{case.db_id}"
            gold_entries = {entries[case.db_id].get(t, t) for t in case.gold_tables}
            kept = {t.name.lower() for t in pack.tables} if right_db else set()
            kept_cols = (
                {(c.table.lower(), c.name.lower()) for c in pack.columns} if right_db else set()
            )
            total_cols = sum(len(t.columns) for t in graph.tables)
            row: dict[str, Any] = {
                "strict_table": gold_entries <= kept,
                "table_recall": len(gold_entries & kept) / len(gold_entries),
                "tables_kept": len(pack.tables),
                "table_share": len(pack.tables) / max(1, len(graph.tables)),
                "columns_kept": len(pack.columns),
                "column_share": len(pack.columns) / max(1, total_cols),
                "database_columns": total_cols,
                "tokens": pack.tokens,
                "right_database": right_db,
                # The right database chosen, or the runner-up: a caller that asks when two
                # are close would have offered it. A pack the floor emptied chose none (its
                # `alternatives` are then the nearest databases, not runners-up): not counted.
                "right_database_top2": right_db
                or (
                    pack.source is not None
                    and any(a.source == f"{dataset}/{case.db_id}" for a in pack.alternatives[:1])
                ),
            }
            if case.gold_columns is not None:
                gold_columns = {(entries[case.db_id].get(t, t), c) for t, c in case.gold_columns}
                row["strict_column"] = gold_columns <= kept_cols
                # The floor of the column share: what the gold query alone uses.
                row["gold_column_share"] = len(gold_columns) / max(1, total_cols)
                if right_db:
                    # The floor for these tables: pruning keeps their keys whatever the question.
                    keys = _keys_of(graph, [t.name for t in pack.tables], pack.join_paths)
                    row["keys_and_gold_share"] = len(keys | gold_columns) / max(1, total_cols)
                row["column_recall"] = (
                    len(gold_columns & kept_cols) / len(gold_columns) if gold_columns else 1.0
                )
            rows.append(row)
            item: dict[str, Any] = {
                "set": "benchmark", "number": number, **({"id": case.id} if case.id else {}),
                "database": case.db_id,
                "question": case.question, "empty": not pack.tables,
                "strict_table": row["strict_table"], "right_database": right_db,
                # What a miss is read from: the pack's tables and the gold ones it lacks.
                "tables": sorted(t.name for t in pack.tables),
                "missed": sorted(gold_entries - kept),
                "missed_why": missed_causes(pack, gold_entries - kept, right_db),
                "relevance": _measures(pack),
                # The runners-up with their votes over the chosen database's (1.0: as good):
                # what a close-call threshold is calibrated on.
                "source": pack.source,
                "alternatives": [[a.source, a.score] for a in pack.alternatives],
                "source_chosen_by": pack.source_chosen_by,
            }  # fmt: skip
            if right_db and case.gold_columns is not None:
                # What column rules are studied on: each kept column with its tier and reason,
                # beside the gold columns and the keys pruning keeps whatever the question.
                item["columns"] = {
                    "tables": [t.name for t in pack.tables],
                    "kept": [[c.table, c.name, c.tier, c.reason] for c in pack.columns],
                    "gold": sorted(gold_columns),
                    "keys": sorted(keys),
                    "database_columns": total_cols,
                }
            written.append(item)
            if baselines:
                text = f"{case.question} {case.evidence}".strip()
                vector = embedder.embed([text])[0]
                for mode, weights in (
                    ("bm25", (0.0, 1.0)),
                    ("dense", (1.0, 0.0)),
                    ("fused", (1.0, 1.0)),
                ):
                    hits = store.search(
                        conn, text, vector, kinds=("ddl",), sources=sources, n=max(KS),
                        dense_weight=weights[0], lexical_weight=weights[1],
                    )  # fmt: skip
                    ranked = [h.table.lower() for h in hits if h.score > 0]
                    right = [h.source == f"{dataset}/{case.db_id}" for h in hits if h.score > 0]
                    for k in (*KS, "schemawise_k"):
                        size = k if isinstance(k, int) else max(1, len(pack.tables))
                        top = {t for t, ok in zip(ranked[:size], right[:size], strict=True) if ok}
                        hit = case.gold_tables <= top
                        baseline_hits[mode][k].append(float(hit))  # type: ignore[index]
        # Questions none of the databases answers: the pack should come back empty.
        ordered = sorted(graphs)
        for number, question in enumerate(off_topic_questions()):
            if not in_half(number, half):
                continue
            sources = pooled if union else [f"{dataset}/{ordered[number % len(ordered)]}"]
            pack = build_context(conn, question, named, embedder, sources=sources,
                                 metadata=metadata, settings=settings)  # fmt: skip
            written.append({"set": "off_topic", "number": number, "question": question,
                            "empty": not pack.tables, "relevance": _measures(pack),
                            "source": pack.source})  # fmt: skip
    if items is not None:
        with items.open("w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(item) + "\n" for item in written)
    n = len(rows)
    off_topic = [w for w in written if w["set"] == "off_topic"]

    def share_empty(entries: list[dict[str, Any]]) -> float | None:
        return round(float(np.mean([e["empty"] for e in entries])), 4) if entries else None

    def mean(key: str) -> float | None:
        values = [r[key] for r in rows if key in r]
        return round(float(np.mean(values)), 4) if values else None

    report: dict[str, Any] = {
        "benchmark": "linking",
        "dataset": dataset,
        "union": union,
        "questions": n,
        "half": half,
        "relevance_floor": relevance_floor,
        "shared_documents": settings.shared_documents,
        "reworded": str(reworded) if reworded is not None else None,
        "golden": str(golden) if golden is not None else None,
        # By default on when pooled (several databases, the default embedder).
        "lexicon": lexicon
        if lexicon is not None
        else union and len(graphs) > 1 and embedder.name == DEFAULT_FLOOR.embedder,
        "described": describe is not None,
        "model_picks_source": pick_source is not None and union,
        "model_changed_source": sum(
            w.get("source_chosen_by") == "model" for w in written if w["set"] == "benchmark"
        ),
        "skipped_unresolvable_gold": skipped,
        # Why the gold tables the packs lack are missing, counted over every question.
        "missed_tables_by_cause": dict(
            Counter(c for w in written if w["set"] == "benchmark" for c in w["missed_why"].values())
        ),
        # A team's own set: which items to fix (`schemawise check DB --sql …` says why).
        **({"skipped_items": unread} if dataset == "golden" else {}),
        "databases": len(graphs),
        "tables_listed": sum(len(d.listed) for d in databases.values()),
        "entries_after_collapsing_shards": sum(len(collapsed(g).tables) for g in graphs.values()),
        "documents_indexed": indexed,
        "indexing_seconds": round(index_seconds, 2),
        "schemawise": {
            "strict_table_recall": mean("strict_table"),
            "table_recall": mean("table_recall"),
            "strict_column_recall": mean("strict_column"),
            "column_recall": mean("column_recall"),
            "tables_kept_mean": mean("tables_kept"),
            "table_share_mean": mean("table_share"),
            "columns_kept_mean": mean("columns_kept"),
            "column_share_mean": mean("column_share"),
            # All columns kept over all the databases' columns, question by question: a small
            # database (11 columns) weighs as little as it holds.
            "column_share_pooled": round(
                sum(r["columns_kept"] for r in rows)
                / max(1, sum(r["database_columns"] for r in rows)),
                4,
            ),
            "gold_column_share_mean": mean("gold_column_share"),
            # The gold columns plus the keys of the tables kept, questions of the right database.
            "keys_and_gold_share_mean": mean("keys_and_gold_share"),
            "tokens_mean": mean("tokens"),
            "tokens_p95": float(np.percentile([r["tokens"] for r in rows], 95)) if rows else 0.0,
            "share_within_8000_tokens": round(
                float(np.mean([r["tokens"] <= 8000 for r in rows])), 4
            )
            if rows
            else None,
            "right_database": mean("right_database"),
            "right_database_top2": mean("right_database_top2"),
            "empty_share": share_empty([w for w in written if w["set"] == "benchmark"]),
            "latency_seconds": percentiles(latencies),
        },
        "off_topic": {
            "questions": len(off_topic),
            "empty_share": share_empty(off_topic),
            "empty_share_even": share_empty([w for w in off_topic if w["number"] % 2 == 0]),
            "empty_share_odd": share_empty([w for w in off_topic if w["number"] % 2 == 1]),
        },
    }
    if baselines:
        report["baselines_strict_table_recall"] = {
            mode: {str(k): round(float(np.mean(v)), 4) for k, v in by_k.items()}
            for mode, by_k in baseline_hits.items()
        }
    return report
