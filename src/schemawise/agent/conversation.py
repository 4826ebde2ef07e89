"""Conversations kept across turns (SQLite in the schemawise home): each turn's question,
intent, SQL, the result's shape (never its rows) and the user's feedback. A follow-up reads
the last turns to build on the previous SQL."""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schemawise.agent.prompts import PriorTurn

SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY, source TEXT, started_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS turns (
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    number INTEGER NOT NULL,
    at REAL NOT NULL,
    question TEXT NOT NULL,
    intent TEXT NOT NULL,
    status TEXT NOT NULL,
    sql TEXT,
    columns TEXT,        -- JSON list: the result's shape, not its rows
    row_count INTEGER,
    feedback TEXT,
    source TEXT,         -- the database the turn was answered from
    follows TEXT,        -- the earlier questions it was read with ("": it began a subject)
    PRIMARY KEY (conversation_id, number)
);
"""


# Columns added since the first version: a store written before gains them when opened.
ADDED_COLUMNS = {"source": "TEXT", "follows": "TEXT"}


def _add_missing_columns(conn: sqlite3.Connection) -> None:
    present = {row[1] for row in conn.execute("PRAGMA table_info(turns)")}
    for name, kind in ADDED_COLUMNS.items():
        if name not in present:
            add_column(conn, name, kind)


def add_column(conn: sqlite3.Connection, name: str, kind: str) -> None:
    """Add a column to `turns`; one another process opening the same store added first (since
    this one looked) is there already, which is what was wanted."""
    try:
        conn.execute(f"ALTER TABLE turns ADD COLUMN {name} {kind}")
    except sqlite3.OperationalError as exc:
        if "duplicate column" not in str(exc):
            raise


def default_path() -> Path:
    from schemawise.config import home_dir

    return home_dir() / "conversations.sqlite"


@dataclass(frozen=True)
class Turn:
    number: int
    question: str
    intent: str
    status: str
    sql: str | None
    columns: list[str]
    row_count: int | None
    feedback: str | None
    source: str | None = None
    follows: str = ""

    def prior(self) -> PriorTurn:
        return PriorTurn(self.question, self.sql, tuple(self.columns), self.row_count)


class ConversationStore:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_path()
        with self._connect() as conn:
            conn.executescript(SCHEMA)
            _add_missing_columns(conn)

    def _connect(self) -> sqlite3.Connection:
        # One short transaction per call: nothing half-written survives a crash.
        return sqlite3.connect(self.path, timeout=10)

    def start(self, source: str | None = None) -> str:
        conversation = uuid.uuid4().hex[:12]
        with self._connect() as conn:
            conn.execute("INSERT INTO conversations VALUES (?, ?, ?)",
                         (conversation, source, time.time()))  # fmt: skip
        return conversation

    def exists(self, conversation: str) -> bool:
        with self._connect() as conn:
            row = conn.execute("SELECT 1 FROM conversations WHERE id = ?", (conversation,))
            return row.fetchone() is not None

    def add_turn(
        self,
        conversation: str,
        question: str,
        intent: str,
        status: str,
        sql: str | None = None,
        columns: list[str] | None = None,
        row_count: int | None = None,
        source: str | None = None,
        follows: str = "",
    ) -> int:
        with self._connect() as conn:
            (number,) = conn.execute(
                "SELECT coalesce(max(number), 0) + 1 FROM turns WHERE conversation_id = ?",
                (conversation,),
            ).fetchone()
            conn.execute(
                "INSERT INTO turns (conversation_id, number, at, question, intent, status, sql, "
                "columns, row_count, source, follows) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (conversation, number, time.time(), question, intent, status, sql,
                 json.dumps(columns or []), row_count, source, follows),
            )  # fmt: skip
        return int(number)

    def turns(self, conversation: str) -> list[Turn]:
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT number, question, intent, status, sql, columns, row_count, feedback, "
                "source, follows FROM turns WHERE conversation_id = ? ORDER BY number",
                (conversation,),
            ).fetchall()
        return [Turn(r[0], r[1], r[2], r[3], r[4], json.loads(r[5] or "[]"), r[6], r[7], r[8],
                     r[9] or "") for r in rows]  # fmt: skip

    def feedback(self, conversation: str, number: int, text: str) -> None:
        with self._connect() as conn:
            conn.execute("UPDATE turns SET feedback = ? WHERE conversation_id = ? AND number = ?",
                         (text, conversation, number))  # fmt: skip


def as_dict(turn: Turn) -> dict[str, Any]:
    return {"number": turn.number, "question": turn.question, "intent": turn.intent,
            "status": turn.status, "sql": turn.sql, "columns": turn.columns,
            "row_count": turn.row_count, "feedback": turn.feedback,
            "source": turn.source, "follows": turn.follows}  # fmt: skip
