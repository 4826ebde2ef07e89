"""The embedding worker. What "nothing lost" means is SECURITY.md's I1–I9; each step below
says which invariant it keeps."""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql as pgsql

from schemawise.index.embed import Embedder, EmbeddingError, backoff_seconds, get_embedder
from schemawise.rows.config import CHANNEL, RowsConfig, all_configs

log = logging.getLogger("schemawise.rows.worker")


@dataclass
class WorkerSettings:
    batch_size: int = 128
    poll_seconds: float = 1.0
    reconcile_seconds: float = 60.0
    max_attempts: int = 5
    backoff_base: float = 0.5
    backoff_cap: float = 60.0


@dataclass
class WorkerStats:
    batches: int = 0
    embedded: int = 0
    skipped_unchanged: int = 0
    superseded: int = 0
    failures: int = 0
    parked: int = 0
    reconciled: int = 0
    reconnects: int = 0


@dataclass
class Worker:
    url: str
    settings: WorkerSettings = field(default_factory=WorkerSettings)
    embedder_for: Callable[[RowsConfig], Embedder] | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    stats: WorkerStats = field(default_factory=WorkerStats)
    # Set once the worker listens and has reconciled: changes from then on reach it promptly.
    ready: threading.Event = field(default_factory=threading.Event)

    def _embedder(self, config: RowsConfig) -> Embedder:
        embedder = self.embedder_for(config) if self.embedder_for else get_embedder(config.model)
        if embedder.dim != config.dim:
            raise EmbeddingError(
                f"Model {embedder.name} gives {embedder.dim} dimensions; {config.table} stores "
                f"{config.dim}.",
                "Run `rows enable` again with the model to switch to.",
                retryable=False,
            )
        return embedder

    # ---- one batch -------------------------------------------------------------------------

    def process_batch(self, conn: psycopg.Connection[Any]) -> int:
        """Claim, embed, write, delete: one transaction. Returns how many entries it settled."""
        configs = {c.table: c for c in all_configs(conn)}
        conn.commit()
        with conn.transaction():
            # I4: claims are row locks; a worker that dies releases them when its
            # transaction aborts. SKIP LOCKED lets several workers share the queue (I9).
            entries = conn.execute(
                "SELECT id, table_name, row_key, attempts FROM schemawise.rows_outbox "
                "WHERE parked_at IS NULL AND next_attempt_at <= clock_timestamp() "
                "ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED",
                (self.settings.batch_size,),
            ).fetchall()
            if not entries:
                return 0
            by_table: dict[str, list[tuple[int, str, int]]] = defaultdict(list)
            for entry_id, table, key, attempts in entries:
                by_table[table].append((entry_id, key, attempts))
            settled = 0
            for table, items in by_table.items():
                config = configs.get(table)
                if config is None:  # the table was disabled: its entries mean nothing now
                    self._delete(conn, [i for i, _, _ in items])
                    settled += len(items)
                    continue
                settled += self._process_table(conn, config, items)
            self.stats.batches += 1
            return settled

    def _process_table(
        self, conn: psycopg.Connection[Any], config: RowsConfig, items: list[tuple[int, str, int]]
    ) -> int:
        keys = sorted({key for _, key, _ in items})
        text = config.text_expression()
        rows = conn.execute(
            pgsql.SQL(
                "SELECT {key}::text, {text}, md5({text}), sw_text_hash, sw_embedding IS NOT NULL "
                "FROM {table} WHERE {key} = ANY(%s::text[]::{key_type}[])"
            ).format(
                key=config.key(), text=text, table=config.ref(), key_type=pgsql.SQL(config.key_type)
            ),
            (keys,),
        ).fetchall()
        current = {r[0]: r for r in rows}
        to_embed = []
        for key in keys:
            row = current.get(key)
            if row is None:
                continue  # deleted since: nothing to embed
            if row[3] == row[2] and row[4]:
                self.stats.skipped_unchanged += 1  # I3: same text, no provider call
                continue
            to_embed.append(row)
        entry_ids = [i for i, _, _ in items]
        if to_embed:
            try:
                vectors = self._embedder(config).embed([r[1] for r in to_embed])
            except EmbeddingError as exc:
                self._fail(conn, items, exc)
                return len(items)
            # I7 is enforced inside embed(): count, dimension and finiteness were checked.
            register_vector(conn)
            # I3: compare-and-set on the hash of the row's *current* text. If the text
            # changed after it was read, nothing is written; the change's own outbox entry
            # (I1) brings the row back with its new text. One pipelined statement per row.
            statement = pgsql.SQL(
                "UPDATE {table} SET sw_embedding = %s, sw_text_hash = %s "
                "WHERE {key} = %s::{key_type} AND md5({text}) = %s"
            ).format(
                table=config.ref(), key=config.key(), key_type=pgsql.SQL(config.key_type), text=text
            )
            with conn.cursor() as cursor:
                cursor.executemany(
                    statement,
                    [
                        (np.asarray(vector, dtype=np.float32), row[2], row[0], row[2])
                        for row, vector in zip(to_embed, vectors, strict=True)
                    ],
                )
                written = max(cursor.rowcount, 0)
            self.stats.embedded += written
            self.stats.superseded += len(to_embed) - written
        # I2: the entries go in the same transaction that wrote the vectors.
        self._delete(conn, entry_ids)
        return len(items)

    def _delete(self, conn: psycopg.Connection[Any], ids: list[int]) -> None:
        conn.execute("DELETE FROM schemawise.rows_outbox WHERE id = ANY(%s)", (ids,))

    def _fail(
        self, conn: psycopg.Connection[Any], items: list[tuple[int, str, int]], exc: EmbeddingError
    ) -> None:
        """I8: retry later with backoff and jitter (honouring Retry-After); park after N."""
        self.stats.failures += 1
        message = exc.message[:500]
        for entry_id, _, attempts in items:
            attempt = attempts + 1
            delay = backoff_seconds(attempt, self.settings.backoff_base, self.settings.backoff_cap)
            if exc.retry_after is not None:
                delay = max(delay, exc.retry_after)
            park = attempt >= self.settings.max_attempts or not exc.retryable
            conn.execute(
                "UPDATE schemawise.rows_outbox SET attempts = %s, last_error = %s, "
                "next_attempt_at = clock_timestamp() + make_interval(secs => %s), "
                "parked_at = CASE WHEN %s THEN clock_timestamp() END WHERE id = %s",
                (attempt, message, delay, park, entry_id),
            )
            self.stats.parked += park
        log.warning("embedding failed for %d entries: %s", len(items), message)

    # ---- reconciliation --------------------------------------------------------------------

    def reconcile(self, conn: psycopg.Connection[Any]) -> int:
        """I6: rows with no vector or a stale hash and no queue entry are enqueued — TRUNCATE,
        bulk loads with triggers off and replica-mode writes enqueue nothing by themselves."""
        total = 0
        for config in all_configs(conn):
            cursor = conn.execute(
                pgsql.SQL(
                    "INSERT INTO schemawise.rows_outbox (table_name, row_key) "
                    "SELECT {name}, t.{key}::text FROM {table} t "
                    "WHERE (t.sw_embedding IS NULL OR t.sw_text_hash IS DISTINCT FROM md5({text})) "
                    "AND NOT EXISTS (SELECT 1 FROM schemawise.rows_outbox o "
                    "WHERE o.table_name = {name} AND o.row_key = t.{key}::text)"
                ).format(
                    name=pgsql.Literal(config.table),
                    key=config.key(),
                    table=config.ref(),
                    text=config.text_expression("t"),
                )
            )
            total += cursor.rowcount
        # Entries of tables no longer enabled would wait forever: drop them.
        conn.execute(
            "DELETE FROM schemawise.rows_outbox o WHERE NOT EXISTS "
            "(SELECT 1 FROM schemawise.rows_config c WHERE c.table_name = o.table_name)"
        )
        conn.commit()
        self.stats.reconciled += total
        return total

    # ---- the loop --------------------------------------------------------------------------

    def drain(
        self, conn: psycopg.Connection[Any], on_progress: Callable[[int], None] | None = None
    ) -> int:
        """Process batches until nothing is ready."""
        done = 0
        while not self.stop.is_set():
            settled = self.process_batch(conn)
            if not settled:
                break
            done += settled
            if on_progress:
                on_progress(settled)
        return done

    def run(self) -> None:
        """Until `stop` is set: drain, wait for a notification or the poll interval (I5),
        reconcile on a timer (I6), reconnect after any connection loss (I4)."""
        attempt = 0
        while not self.stop.is_set():
            try:
                self._serve()
                return
            except psycopg.Error as exc:
                # A lost connection or server restart (I4), or an error such as a deadlock
                # between workers: the transaction aborted and its claims were released.
                attempt += 1
                self.stats.reconnects += 1
                delay = backoff_seconds(attempt, 0.2, 5.0)
                log.warning("worker interrupted (%s); reconnecting in %.1fs", exc, delay)
                self.stop.wait(delay)

    def _serve(self) -> None:
        with (
            psycopg.connect(self.url) as conn,
            psycopg.connect(self.url, autocommit=True) as listener,
        ):
            listener.execute(pgsql.SQL("LISTEN {}").format(pgsql.Identifier(CHANNEL)))
            self.reconcile(conn)
            self.ready.set()
            next_reconcile = time.monotonic() + self.settings.reconcile_seconds
            while not self.stop.is_set():
                self.drain(conn)
                if time.monotonic() >= next_reconcile:
                    self.reconcile(conn)
                    next_reconcile = time.monotonic() + self.settings.reconcile_seconds
                    continue
                # I5: a notification only wakes the worker early; the timeout is the poll.
                for _ in listener.notifies(timeout=self.settings.poll_seconds, stop_after=1):
                    pass
