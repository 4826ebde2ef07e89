"""Row search against the real embedded Postgres + pgvector: enable, worker invariants under
faults (SECURITY.md I1–I9), hybrid search, tenancy, calibration, sw_match."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import psycopg
import pytest

from schemawise.demo.recruiting import RecruitingSizes, build
from schemawise.errors import SchemawiseError
from schemawise.index.embed import EmbeddingError, get_embedder
from schemawise.rows.config import load_config
from schemawise.rows.enable import disable, enable
from schemawise.rows.search import SearchSettings, search
from schemawise.rows.worker import Worker, WorkerSettings

TABLE = "recruiting.assignments"
SIZES = RecruitingSizes(owners=40, assignments=1500, candidates=100, big_owners=2, medium_owners=4)
FAST = WorkerSettings(batch_size=100, poll_seconds=0.2, backoff_base=0.01, backoff_cap=0.05)


@pytest.fixture()
def rows_db(embedded_url: str) -> Iterator[str]:
    """A fresh, small recruiting schema, enabled for search, with nothing embedded yet."""
    build(embedded_url, SIZES)
    enable("embedded", TABLE, ["title", "description"], "owner_id")
    with psycopg.connect(embedded_url) as conn:  # entries (parked too) of earlier tests
        conn.execute("DELETE FROM schemawise.rows_outbox")
        conn.execute("UPDATE schemawise.rows_config SET threshold = NULL, calibrated_at = NULL")
    yield embedded_url


def verify_current(url: str, sample: int = 50) -> None:
    """Every row embedded from its current text, nothing left in the queue."""
    with psycopg.connect(url) as conn:
        stale = conn.execute(
            "SELECT count(*) FROM recruiting.assignments WHERE sw_embedding IS NULL "
            "OR sw_text_hash IS DISTINCT FROM md5(concat_ws(E'\\n', coalesce(title::text, ''), "
            "coalesce(description::text, '')))"
        ).fetchone()
        queued = conn.execute("SELECT count(*) FROM schemawise.rows_outbox").fetchone()
        assert stale == (0,), f"{stale[0] if stale else '?'} rows without a current vector"
        assert queued == (0,), "entries left in the outbox"
        # The worker's own text: a NULL column is an empty line, not left out (with a NULL
        # description a bare title would embed differently from the worker's "title\n").
        rows = conn.execute(
            "SELECT concat_ws(E'\\n', coalesce(title::text, ''), coalesce(description::text, "
            "'')), sw_embedding::text FROM recruiting.assignments "
            "ORDER BY description IS NULL DESC, random() LIMIT %s",  # rows with a NULL: always
            (sample,),
        ).fetchall()
    embedder = get_embedder()
    expected = embedder.embed([r[0] for r in rows])
    for (_, stored), vector in zip(rows, expected, strict=True):
        actual = np.array([float(x) for x in stored.strip("[]").split(",")])
        assert float(actual @ vector) > 0.999


def drain(url: str, worker: Worker | None = None) -> Worker:
    worker = worker or Worker(url, FAST)
    with psycopg.connect(url) as conn:
        worker.reconcile(conn)
        for _ in range(400):
            worker.drain(conn)
            left = conn.execute(
                "SELECT count(*) FROM schemawise.rows_outbox WHERE parked_at IS NULL"
            ).fetchone()
            conn.commit()
            if left == (0,):
                break
            time.sleep(0.02)
    return worker


@dataclass
class FlakyEmbedder:
    """The real embedder behind a provider that misbehaves for its first `failures` calls."""

    failures: int
    error: str = "500"
    name: str = "wordllama-l2-256"
    dim: int = 256
    calls: int = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        real = get_embedder().embed(texts)
        if self.calls > self.failures:
            return real
        if self.error == "500":
            raise EmbeddingError("The embeddings endpoint answered 500.")
        if self.error == "timeout":
            raise EmbeddingError("The embeddings endpoint timed out.")
        if self.error == "429":
            raise EmbeddingError("The embeddings endpoint answered 429.", retry_after=1.5)
        from schemawise.index.embed import validate_vectors

        if self.error == "count":
            return validate_vectors(real[:-1], len(texts), self.dim)
        if self.error == "dim":
            return validate_vectors(real[:, :10], len(texts), self.dim)
        bad = real.copy()
        bad[0, 0] = np.nan
        return validate_vectors(bad, len(texts), self.dim)


def test_enable_is_idempotent_and_refuses_bad_input(rows_db: str, tmp_path: Path) -> None:
    again = enable("embedded", TABLE, ["title", "description"], "owner_id")
    assert again.iterative_scan and again.pgvector.startswith("0.8")
    with psycopg.connect(rows_db) as conn:
        found = conn.execute("SELECT indexdef FROM pg_indexes WHERE tablename = 'assignments'")
        indexes = {r[0] for r in found.fetchall()}
        assert any("hnsw" in i and "vector_cosine_ops" in i for i in indexes)
        assert any("gin" in i and "sw_tsv" in i for i in indexes)
        assert any("(owner_id)" in i for i in indexes)
    with pytest.raises(SchemawiseError, match="PostgreSQL"):
        enable(f"sqlite:///{tmp_path / 'x.sqlite'}", "t", ["a"])
    with pytest.raises(SchemawiseError, match="no column"):
        enable("embedded", TABLE, ["nope"], "owner_id")


def test_outbox_is_written_in_the_same_transaction(rows_db: str) -> None:
    with psycopg.connect(rows_db) as conn:
        conn.execute("DELETE FROM schemawise.rows_outbox")
        conn.commit()
        conn.execute("UPDATE recruiting.assignments SET title = 'x' WHERE assignment_id = 1")
        conn.rollback()  # I1: a rolled-back change leaves nothing
        assert conn.execute("SELECT count(*) FROM schemawise.rows_outbox").fetchone() == (0,)
        conn.execute("UPDATE recruiting.assignments SET title = 'x' WHERE assignment_id = 1")
        conn.commit()
        assert conn.execute(
            "SELECT row_key FROM schemawise.rows_outbox WHERE table_name = %s", (TABLE,)
        ).fetchall() == [("1",)]
        # Updating another column does not enqueue.
        conn.execute("UPDATE recruiting.assignments SET status = 'open' WHERE assignment_id = 2")
        conn.commit()
        assert conn.execute("SELECT count(*) FROM schemawise.rows_outbox").fetchone() == (1,)


def test_backfill_then_unchanged_rows_are_skipped(rows_db: str) -> None:
    worker = drain(rows_db)
    assert worker.stats.embedded == SIZES.assignments
    verify_current(rows_db)
    with psycopg.connect(rows_db) as conn:  # the same text written again: no provider call
        conn.execute("UPDATE recruiting.assignments SET title = title WHERE assignment_id <= 10")
        conn.commit()
    again = drain(rows_db)
    assert again.stats.skipped_unchanged == 10 and again.stats.embedded == 0


@pytest.mark.parametrize("error", ["500", "timeout", "429", "count", "dim", "nan"])
def test_provider_failures_are_retried_and_nothing_bad_is_written(rows_db: str, error: str) -> None:
    flaky = FlakyEmbedder(failures=2, error=error)
    worker = Worker(rows_db, FAST, embedder_for=lambda config: flaky)  # type: ignore[arg-type,return-value]
    with psycopg.connect(rows_db) as conn:
        worker.reconcile(conn)
        worker.process_batch(conn)  # the first batch fails: nothing may be written for it
        written = conn.execute(
            "SELECT count(*) FROM recruiting.assignments WHERE sw_embedding IS NOT NULL"
        ).fetchone()
        assert written == (0,)
        retry = conn.execute(
            "SELECT min(next_attempt_at - clock_timestamp()) FROM schemawise.rows_outbox "
            "WHERE attempts > 0"
        ).fetchone()
        assert retry is not None and retry[0] is not None
        if error == "429":  # Retry-After is honoured (1.5 s, far above the backoff here)
            assert retry[0].total_seconds() > 1.0
    drain(rows_db, worker)
    assert worker.stats.failures >= 1 and worker.stats.parked == 0
    verify_current(rows_db)


def test_poison_entries_are_parked_and_visible(rows_db: str) -> None:
    from schemawise.rows.status import status

    class Poison:
        name, dim = "wordllama-l2-256", 256

        def embed(self, texts: list[str]) -> np.ndarray:
            if any("POISON" in t for t in texts):
                raise EmbeddingError("provider rejects this text")
            return get_embedder().embed(texts)

    with psycopg.connect(rows_db) as conn:
        drain(rows_db)
        conn.execute("UPDATE recruiting.assignments SET title = 'POISON' WHERE assignment_id = 7")
        conn.commit()
    worker = Worker(rows_db, WorkerSettings(batch_size=10, max_attempts=3, backoff_base=0.001,
                                            backoff_cap=0.002), embedder_for=lambda c: Poison())  # type: ignore[arg-type,return-value]  # fmt: skip
    with psycopg.connect(rows_db) as conn:
        for _ in range(20):
            worker.drain(conn)
            time.sleep(0.01)
        [table] = status(conn)
    assert table["parked"] == 1 and table["queued"] == 0
    assert table["parked_examples"][0]["key"] == "7"
    assert "rejects" in table["parked_examples"][0]["last_error"]


def test_duplicates_and_concurrent_workers(rows_db: str) -> None:
    with psycopg.connect(rows_db) as conn:
        conn.execute(  # duplicate entries for every row, and a storm of notifications
            "INSERT INTO schemawise.rows_outbox (table_name, row_key) "
            "SELECT %s, assignment_id::text FROM recruiting.assignments, generate_series(1, 2)",
            (TABLE,),
        )
        for _ in range(50):
            conn.execute("SELECT pg_notify('schemawise_rows', %s)", (TABLE,))
        conn.commit()
    workers = [Worker(rows_db, FAST) for _ in range(3)]
    threads = [threading.Thread(target=drain, args=(rows_db, w)) for w in workers]
    for thread in threads:
        thread.start()
    with psycopg.connect(rows_db, autocommit=True) as conn:  # edits while they work
        for i in range(1, 60):
            conn.execute(
                "UPDATE recruiting.assignments SET description = description || ' Updated.' "
                "WHERE assignment_id = %s",
                (i * 13,),
            )
    for thread in threads:
        thread.join(timeout=120)
    drain(rows_db)
    verify_current(rows_db, sample=100)


def test_a_vector_from_old_text_never_overwrites_newer_text(rows_db: str) -> None:
    """The text changes while the provider computes its vector: compare-and-set refuses the
    stale vector, and the change's own entry brings the row back."""

    class ChangesTextMeanwhile:
        name, dim = "wordllama-l2-256", 256
        done = False

        def embed(self, texts: list[str]) -> np.ndarray:
            if not self.done:
                self.done = True
                with psycopg.connect(rows_db, autocommit=True) as other:
                    other.execute(
                        "UPDATE recruiting.assignments SET title = 'Changed meanwhile' "
                        "WHERE assignment_id IN (SELECT assignment_id FROM "
                        "recruiting.assignments ORDER BY assignment_id LIMIT 5)"
                    )
            return get_embedder().embed(texts)

    worker = Worker(rows_db, FAST, embedder_for=lambda c: ChangesTextMeanwhile())  # type: ignore[arg-type,return-value]
    drain(rows_db, worker)
    assert worker.stats.superseded >= 1
    verify_current(rows_db)


def test_reconciler_finds_rows_no_trigger_saw(rows_db: str) -> None:
    drain(rows_db)
    with psycopg.connect(rows_db) as conn:
        conn.execute("SET session_replication_role = replica")  # bulk-load mode: no triggers
        conn.execute("UPDATE recruiting.assignments SET description = 'Rewritten by a bulk load' "
                     "WHERE assignment_id <= 100")  # fmt: skip
        conn.execute(
            "INSERT INTO recruiting.assignments (assignment_id, owner_id, title, status, "
            "created_at) VALUES (99999, 1, 'Loaded without triggers', 'open', now())"
        )
        conn.commit()
        assert conn.execute("SELECT count(*) FROM schemawise.rows_outbox").fetchone() == (0,)
    worker = drain(rows_db)
    assert worker.stats.reconciled == 101
    verify_current(rows_db)


WORKER_SCRIPT = textwrap.dedent(
    """
    import sys, time
    from schemawise.index.embed import get_embedder
    from schemawise.rows.worker import Worker, WorkerSettings

    class Slow:
        name, dim = "wordllama-l2-256", 256
        def embed(self, texts):
            print("EMBEDDING", flush=True)
            time.sleep(float(sys.argv[2]))
            return get_embedder().embed(texts)

    Worker(sys.argv[1], WorkerSettings(batch_size=200, poll_seconds=0.2),
           embedder_for=lambda c: Slow()).run()
    """
)


def _start_worker(url: str, delay: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", WORKER_SCRIPT, url, str(delay)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # wait until it holds a claimed batch
    assert "EMBEDDING" in line, proc.stderr.read() if proc.stderr else ""
    return proc


def test_worker_killed_mid_batch_loses_nothing(rows_db: str) -> None:
    proc = _start_worker(rows_db, delay=30)
    with psycopg.connect(rows_db) as conn:
        claimed = conn.execute(  # its claims are row locks held by a live transaction
            "SELECT count(*) FROM schemawise.rows_outbox WHERE id IN "
            "(SELECT id FROM schemawise.rows_outbox FOR UPDATE SKIP LOCKED)"
        ).fetchone()
        conn.rollback()
    assert claimed is not None and claimed[0] < SIZES.assignments
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    time.sleep(0.5)  # the server notices the dead connection and aborts its transaction
    drain(rows_db)
    verify_current(rows_db)


def test_database_restart_mid_batch(rows_db: str, schemawise_home: Path) -> None:
    from schemawise.db import embedded

    worker = Worker(rows_db, FAST)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    time.sleep(0.3)
    embedded.stop()
    time.sleep(0.5)
    url = embedded.ensure_started()
    assert url == rows_db
    deadline = time.monotonic() + 90
    with psycopg.connect(url) as conn:
        while time.monotonic() < deadline:
            left = conn.execute(
                "SELECT count(*) FROM recruiting.assignments WHERE sw_embedding IS NULL"
            ).fetchone()
            conn.commit()
            if left == (0,):
                break
            time.sleep(0.2)
    worker.stop.set()
    thread.join(timeout=30)
    assert worker.stats.reconnects >= 1
    verify_current(rows_db)


def test_sigterm_stops_the_worker_cleanly(rows_db: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "schemawise", "rows", "worker", "embedded", "--poll", "0.2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy(),
    )  # fmt: skip
    time.sleep(4)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "worker stopped" in err
    drain(rows_db)
    verify_current(rows_db)


def test_search_is_tenant_scoped_complete_and_can_be_empty(rows_db: str) -> None:
    drain(rows_db)
    with psycopg.connect(rows_db) as conn:
        config = load_config(conn, TABLE)
        small_owner = conn.execute(
            "SELECT owner_id FROM recruiting.assignments GROUP BY 1 HAVING count(*) >= 20 "
            "ORDER BY count(*) LIMIT 1"
        ).fetchone()
        assert small_owner is not None
        result = search(conn, config, "healthcare", tenant=small_owner[0],
                        settings=SearchSettings(k=20, use_threshold=False))  # fmt: skip
        assert len(result.rows) == 20  # complete even for a tenant with a sliver of the rows
        keys = [r["key"] for r in result.rows]
        owners = conn.execute(
            "SELECT DISTINCT owner_id FROM recruiting.assignments WHERE assignment_id = ANY(%s)",
            (keys,),
        ).fetchall()
        assert owners == [small_owner]
        # Each hit carries the text it was found by, as the table holds it (cut to 300).
        said = dict(conn.execute(
            "SELECT assignment_id, left(description, 300) FROM recruiting.assignments "
            "WHERE assignment_id = ANY(%s)", (keys,),
        ).fetchall())  # fmt: skip
        assert [r["text"]["description"] for r in result.rows] == [said[k] for k in keys]
        assert all(set(r["text"]) == set(config.text_columns) for r in result.rows)
        # A calibrated threshold makes "nothing relevant" an empty answer.
        conn.execute("UPDATE schemawise.rows_config SET threshold = 0.05, calibrated_at = now()")
        conn.commit()
        config = load_config(conn, TABLE)
        empty = search(conn, config, "quantum chromodynamics", tenant=small_owner[0])
        assert empty.rows == [] and empty.empty_reason
        with pytest.raises(SchemawiseError, match="tenant"):
            search(conn, config, "healthcare")


def test_row_security_holds_even_when_the_query_tries_to_escape(rows_db: str) -> None:
    from schemawise.runner import run_checked

    drain(rows_db)
    count = "SELECT count(DISTINCT owner_id) FROM recruiting.assignments"
    with psycopg.connect(rows_db) as conn:
        before = conn.execute(count).fetchone()
    enable("embedded", TABLE, ["title", "description"], "owner_id", row_security=True)
    escape = (
        "SELECT DISTINCT a.owner_id FROM recruiting.assignments a "
        "WHERE sw_match('a', 'healthcare') OR a.owner_id = 2 OR 1 = 1"
    )
    outcome = run_checked("embedded", escape, tenant=1)
    assert outcome.result is not None, outcome.to_dict()
    assert outcome.result.rows == [[1]]
    plain = run_checked("embedded", "SELECT count(DISTINCT owner_id) FROM recruiting.assignments")
    assert plain.result is not None and plain.result.rows == [[0]]  # no tenant: no rows
    with psycopg.connect(rows_db) as conn:  # the owner (and other roles) see all as before
        assert conn.execute(count).fetchone() == before
    disable("embedded", TABLE)


def test_calibration_stores_a_threshold(rows_db: str, tmp_path: Path) -> None:
    import json

    from schemawise.demo.recruiting import generate
    from schemawise.rows.calibrate import calibrate, read_labels

    drain(rows_db)
    labels = tmp_path / "labels.jsonl"
    labels.write_text("\n".join(json.dumps(label) for label in generate(SIZES).labels))
    with psycopg.connect(rows_db) as conn:
        report = calibrate(conn, load_config(conn, TABLE), read_labels(labels))
        config = load_config(conn, TABLE)
    assert config.calibrated and config.threshold == pytest.approx(report["threshold"], abs=1e-3)
    assert report["f1"] >= report["f1_without_threshold"]


def test_sw_match_through_the_guarded_path(rows_db: str) -> None:
    from schemawise.runner import run_checked

    drain(rows_db)
    sql = (
        "SELECT a.assignment_id, a.owner_id FROM recruiting.assignments a "
        "WHERE a.status = 'open' AND sw_match('recruiting.assignments', 'oncology', 5)"
    )
    outcome = run_checked("embedded", sql, tenant=1)
    assert outcome.ok, outcome.to_dict()
    assert outcome.result is not None and 0 < len(outcome.result.rows) <= 5
    assert {row[1] for row in outcome.result.rows} == {1}
    with pytest.raises(SchemawiseError, match="tenant"):
        run_checked("embedded", sql)  # the tenant comes from the caller, or nothing runs


def test_changing_the_model_re_embeds_through_the_outbox(
    rows_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from http.server import ThreadingHTTPServer

    from schemawise.index import embed
    from tests.integration.test_openai_endpoint import Handler

    drain(rows_db)
    Handler.mode = "ok"
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv(
        "SCHEMAWISE_OPENAI_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}/v1"
    )
    monkeypatch.setattr(embed, "_CACHE", {})
    try:
        report = enable("embedded", TABLE, ["title", "description"], "owner_id", "openai:m:3")
        assert report.changed_model and report.enqueued == SIZES.assignments
        with psycopg.connect(rows_db) as conn:
            kind = conn.execute(
                "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = "
                "'recruiting.assignments'::regclass AND attname = 'sw_embedding'"
            ).fetchone()
            assert kind == ("vector(3)",)
        worker = drain(rows_db)
        assert worker.stats.embedded == SIZES.assignments
        with psycopg.connect(rows_db) as conn:
            left = conn.execute(
                "SELECT count(*) FROM recruiting.assignments WHERE sw_embedding IS NULL"
            ).fetchone()
            assert left == (0,)
            assert load_config(conn, TABLE).model == "openai:m:3"
    finally:
        server.shutdown()
        server.server_close()
        enable("embedded", TABLE, ["title", "description"], "owner_id")  # back to the default


def test_sw_match_keeps_the_callers_percent_signs(rows_db: str) -> None:
    """With parameters bound, a bare `%` would be read as a placeholder: LIKE and modulo in
    the caller's text must still mean what they say."""
    from schemawise.runner import run_checked

    drain(rows_db)
    sql = (
        "SELECT a.assignment_id FROM recruiting.assignments a WHERE a.title LIKE '%%' "
        "AND a.assignment_id % 2 = 0 AND sw_match('recruiting.assignments', 'oncology', 5)"
    )
    outcome = run_checked("embedded", sql, tenant=1)
    assert outcome.ok, outcome.to_dict()
    assert outcome.result is not None and outcome.result.rows
    assert all(row[0] % 2 == 0 for row in outcome.result.rows)


def test_the_freshness_benchmark_counts_every_change(rows_db: str) -> None:
    """Each change is a distinct row (an update never picks a row changed before), so the
    benchmark reports as many changes as it made, and each became searchable."""
    from schemawise.bench.rows import _freshness

    drain(rows_db)
    report = _freshness(rows_db, changes=200)
    assert report["changes"] == 200
    assert report["searchable"] == 200


def test_a_stop_word_the_user_typed_finds_the_rows_that_hold_it(embedded_url: str) -> None:
    """English text search drops "you": the words as written are indexed beside the stems,
    so a search for "you" within a tenant finds every row of it whose text holds the word."""
    with psycopg.connect(embedded_url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS stopwords CASCADE")
        conn.execute("CREATE SCHEMA stopwords")
        conn.execute("CREATE TABLE stopwords.tracks (id int PRIMARY KEY, genre int, name text)")
        conn.execute(
            "INSERT INTO stopwords.tracks SELECT g, g % 3, CASE WHEN g % 4 = 0 "
            "THEN 'All You Need Is ' || g ELSE 'Night Fever ' || g END "
            "FROM generate_series(1, 60) g"
        )
    enable("embedded", "stopwords.tracks", ["name"], "genre")
    with psycopg.connect(embedded_url) as conn:
        config = load_config(conn, "stopwords.tracks")
        expected = {
            r[0]
            for r in conn.execute(
                "SELECT id FROM stopwords.tracks WHERE genre = 1 AND name ILIKE '%you%'"
            ).fetchall()
        }
        for mode in ("lexical", "hybrid"):
            every = SearchSettings(k=50, mode=mode, use_threshold=False)
            found = search(conn, config, "you", tenant=1, settings=every)
            keys = {r["key"] for r in found.rows}
            assert expected <= keys, (mode, expected - keys)
        # Stemming still works beside it: "needs" finds "Need".
        lexical = SearchSettings(k=50, mode="lexical", use_threshold=False)
        found = search(conn, config, "needs", tenant=1, settings=lexical)
        assert {r["key"] for r in found.rows} == expected
    disable("embedded", "stopwords.tracks")
