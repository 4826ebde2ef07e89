"""`bench rows`: row search on the recruiting demo (200,000 assignments, 220 tenants) —
completeness under tenant filters, quality, empty answers, freshness and latency."""

from __future__ import annotations

import math
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from schemawise.bench.timing import percentiles
from schemawise.db.embedded import ensure_started
from schemawise.demo.recruiting import RecruitingSizes, build
from schemawise.index.embed import get_embedder
from schemawise.rows.calibrate import Label, calibrate
from schemawise.rows.config import load_config
from schemawise.rows.enable import enable
from schemawise.rows.search import SearchSettings, search
from schemawise.rows.worker import Worker, WorkerSettings

TABLE = "recruiting.assignments"
K = 20


def _recall_ndcg(keys: list[Any], relevant: frozenset[Any], k: int = K) -> tuple[float, float]:
    hits = [1.0 if key in relevant else 0.0 for key in keys[:k]]
    ideal = min(len(relevant), k)
    recall = sum(hits) / ideal if ideal else 0.0
    dcg = sum(h / math.log2(i + 2) for i, h in enumerate(hits))
    idcg = sum(1 / math.log2(i + 2) for i in range(ideal))
    return recall, (dcg / idcg if idcg else 0.0)


def _naive(conn: psycopg.Connection[Any], vector: np.ndarray, tenant: int) -> int:
    """What most code does: filter and order by distance, default settings."""
    with conn.transaction():
        rows = conn.execute(
            "SELECT assignment_id FROM recruiting.assignments WHERE owner_id = %s "
            "ORDER BY sw_embedding <=> %s LIMIT %s",
            (tenant, vector, K),
        ).fetchall()
    return len(rows)


def run(rebuild: bool = False, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    say = progress or (lambda _: None)
    url = ensure_started()
    report: dict[str, Any] = {"benchmark": "rows", "table": TABLE, "k": K}
    sizes = RecruitingSizes()
    with psycopg.connect(url) as conn:
        exists = conn.execute("SELECT to_regclass('recruiting.assignments') IS NOT NULL").fetchone()
    if rebuild or not (exists and exists[0]):
        say("building recruiting data")
        data = build(url, sizes)
    else:
        from schemawise.demo.recruiting import generate

        data = generate(sizes)
    enable("embedded", TABLE, ["title", "description"], "owner_id")
    worker = Worker(url, WorkerSettings(batch_size=1000))
    with psycopg.connect(url) as conn:
        worker.reconcile(conn)
        say("embedding (backfill)")
        started = time.perf_counter()
        embedded = worker.drain(conn)
        seconds = time.perf_counter() - started
        report["backfill"] = {
            "rows": embedded,
            "seconds": round(seconds, 2),
            "rows_per_second": round(embedded / seconds, 1) if seconds and embedded else None,
        }
        rows_total = conn.execute("SELECT count(*) FROM recruiting.assignments").fetchone()
        report["rows"] = rows_total[0] if rows_total else 0
        tenants = conn.execute(
            "SELECT owner_id, count(*) FROM recruiting.assignments GROUP BY 1"
        ).fetchall()
        report["tenants"] = {
            "count": len(tenants),
            "under_1_percent": sum(1 for _, n in tenants if n < 0.01 * report["rows"]),
        }
    labels = [
        Label(lab["query"], lab["owner_id"], frozenset(lab["relevant"]), lab["kind"])
        for lab in data.labels
    ]
    # Calibrate on half of the tenants, evaluate on the other half.
    tune = [lab for lab in labels if int(lab.tenant) % 2 == 0]
    test = [lab for lab in labels if int(lab.tenant) % 2 == 1]
    report["labels"] = {"total": len(labels), "calibration": len(tune), "evaluation": len(test)}
    embedder = get_embedder()
    vectors = {
        lab.query: v
        for lab, v in zip(labels, embedder.embed([x.query for x in labels]), strict=True)
    }
    with psycopg.connect(url) as conn:
        register_vector(conn)
        config = load_config(conn, TABLE)
        say("quality and completeness")
        report["quality"] = _quality(conn, config, test, vectors)
        report["over_filtering"] = _over_filtering(conn, config, test, vectors)
        say("calibrating on the calibration half")
        report["calibration"] = calibrate(conn, config, tune, K)
        config = load_config(conn, TABLE)
        report["empty_answers"] = _empty_answers(conn, config, test, vectors)
        say("latency")
        report["search_latency_seconds"] = _latency(conn, config, test, vectors)
    say("freshness")
    report["freshness"] = _freshness(url)
    return report


def _quality(
    conn: Any, config: Any, labels: list[Label], vectors: dict[str, Any]
) -> dict[str, Any]:
    scores: dict[str, dict[str, list[tuple[float, float]]]] = defaultdict(lambda: defaultdict(list))
    for label in labels:
        if not label.relevant:
            continue
        for mode in ("hybrid", "dense", "lexical"):
            result = search(
                conn, config, label.query, tenant=label.tenant, vector=vectors[label.query],
                settings=SearchSettings(k=K, mode=mode, use_threshold=False),
            )  # fmt: skip
            pair = _recall_ndcg([r["key"] for r in result.rows], label.relevant)
            scores[mode][label.kind].append(pair)
            scores[mode]["all"].append(pair)
    return {
        mode: {
            kind: {
                "queries": len(pairs),
                "recall_at_20": round(float(np.mean([p[0] for p in pairs])), 4),
                "ndcg_at_20": round(float(np.mean([p[1] for p in pairs])), 4),
            }
            for kind, pairs in kinds.items()
        }
        for mode, kinds in scores.items()
    }


def _over_filtering(
    conn: Any, config: Any, labels: list[Label], vectors: dict[str, Any]
) -> dict[str, Any]:
    eligible = [lab for lab in labels if len(lab.relevant) >= K]
    ours = naive_indexed = naive_unindexed = 0
    for label in eligible:
        result = search(
            conn, config, label.query, tenant=label.tenant, vector=vectors[label.query],
            settings=SearchSettings(k=K, mode="dense", use_threshold=False),
        )  # fmt: skip
        ours += len(result.rows) == K
        naive_indexed += _naive(conn, vectors[label.query], label.tenant) == K
    # The other regime: no btree on the tenant column, so the planner has only the HNSW index.
    index = "recruiting_assignments_sw_tenant"
    conn.execute(f"DROP INDEX IF EXISTS recruiting.{index}")
    conn.commit()
    try:
        for label in eligible:
            naive_unindexed += _naive(conn, vectors[label.query], label.tenant) == K
    finally:
        conn.execute(f"CREATE INDEX IF NOT EXISTS {index} ON recruiting.assignments (owner_id)")
        conn.commit()
    n = len(eligible) or 1
    return {
        "queries": len(eligible),
        "schemawise_share_with_k_rows": round(ours / n, 4),
        "naive_share_with_k_rows_tenant_btree": round(naive_indexed / n, 4),
        "naive_share_with_k_rows_no_tenant_btree": round(naive_unindexed / n, 4),
    }


def _empty_answers(
    conn: Any, config: Any, labels: list[Label], vectors: dict[str, Any]
) -> dict[str, Any]:
    none = [lab for lab in labels if not lab.relevant]
    empty = 0
    for label in none:
        result = search(conn, config, label.query, tenant=label.tenant, vector=vectors[label.query])
        empty += not result.rows
    recall_with: list[float] = []
    recall_without: list[float] = []
    for label in labels:
        if not label.relevant:
            continue
        for use, bucket in ((True, recall_with), (False, recall_without)):
            result = search(
                conn, config, label.query, tenant=label.tenant, vector=vectors[label.query],
                settings=SearchSettings(k=K, use_threshold=use),
            )  # fmt: skip
            bucket.append(_recall_ndcg([r["key"] for r in result.rows], label.relevant)[0])
    return {
        "threshold": config.threshold,
        "gate": config.gate,
        "queries_without_relevant_rows": len(none),
        "share_returning_nothing": round(empty / len(none), 4) if none else None,
        "recall_at_20_with_threshold": round(float(np.mean(recall_with)), 4),
        "recall_at_20_without_threshold": round(float(np.mean(recall_without)), 4),
    }


def _latency(
    conn: Any, config: Any, labels: list[Label], vectors: dict[str, Any]
) -> dict[str, Any]:
    samples = []
    for label in labels[:100]:
        started = time.perf_counter()
        search(conn, config, label.query, tenant=label.tenant, vector=vectors[label.query])
        samples.append(time.perf_counter() - started)
    return percentiles(samples)


def _freshness(url: str, changes: int = 1000) -> dict[str, Any]:
    """Insert and update rows with the worker running; a watcher notes when each change
    becomes searchable (its vector matches its current text)."""
    worker = Worker(url, WorkerSettings(batch_size=256, poll_seconds=0.2))
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    worker.ready.wait(120)  # its first reconciliation is done: it is listening
    committed: dict[int, float] = {}
    searchable: dict[int, float] = {}
    lock = threading.Lock()
    done = threading.Event()

    def watch() -> None:
        with psycopg.connect(url, autocommit=True) as watcher:
            while not done.is_set() or len(searchable) < len(committed):
                with lock:
                    pending = [k for k in committed if k not in searchable]
                if pending:
                    rows = watcher.execute(
                        "SELECT assignment_id FROM recruiting.assignments "
                        "WHERE assignment_id = ANY(%s) AND sw_text_hash = md5(concat_ws(E'\\n', "
                        "coalesce(title::text, ''), coalesce(description::text, '')))",
                        (pending,),
                    ).fetchall()
                    now = time.perf_counter()
                    with lock:
                        for (key,) in rows:
                            searchable.setdefault(key, now)
                if done.is_set() and time.perf_counter() > deadline[0]:
                    return
                time.sleep(0.02)

    deadline = [time.perf_counter() + 600]
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    with psycopg.connect(url, autocommit=True) as conn:
        top = conn.execute("SELECT max(assignment_id) FROM recruiting.assignments").fetchone()
        next_id = int(top[0] if top and top[0] else 0) + 1
        started = time.perf_counter()
        for batch in range(changes // 50):
            ids = []
            with conn.transaction():
                for i in range(25):  # 25 inserts and 25 updates per transaction
                    key = next_id + batch * 25 + i
                    conn.execute(
                        "INSERT INTO recruiting.assignments (assignment_id, owner_id, title, "
                        "description, status, created_at) VALUES (%s, 1, 'Oncology Nurse', "
                        "%s, 'open', now())",
                        (key, f"Fresh posting {key}: chemotherapy day unit."),
                    )
                    ids.append(key)
                # Rows not changed before: a row updated twice would count as one change (the
                # watcher keys changes by row), which is how 1,000 changes once showed as 999.
                updated = conn.execute(
                    "UPDATE recruiting.assignments SET description = description || ' Updated.' "
                    "WHERE assignment_id IN (SELECT assignment_id FROM recruiting.assignments "
                    "WHERE assignment_id < %s AND NOT assignment_id = ANY(%s) "
                    "ORDER BY random() LIMIT 25) RETURNING assignment_id",
                    (next_id, list(committed)),
                ).fetchall()
                ids += [u[0] for u in updated]
            now = time.perf_counter()
            with lock:
                for key in ids:
                    committed[key] = now
            time.sleep(0.05)
    deadline[0] = time.perf_counter() + 120
    done.set()
    watcher.join(timeout=130)
    total = max(searchable.values(), default=started) - started
    worker.stop.set()
    thread.join(timeout=30)
    delays = [searchable[k] - committed[k] for k in searchable if k in committed]
    return {
        "changes": len(committed),
        "searchable": len(searchable),
        "seconds_until_searchable": percentiles(delays),
        "changes_per_second_kept_up_with": round(len(searchable) / total, 1) if total else None,
    }
