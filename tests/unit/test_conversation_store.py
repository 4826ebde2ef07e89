"""The conversation store (real SQLite): turns keep the database they were answered from, and
a store written before they did opens with its turns intact."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from schemawise.agent.conversation import ConversationStore, history

OLD_SCHEMA = """
CREATE TABLE conversations (id TEXT PRIMARY KEY, source TEXT, started_at REAL NOT NULL);
CREATE TABLE turns (
    conversation_id TEXT NOT NULL REFERENCES conversations(id), number INTEGER NOT NULL,
    at REAL NOT NULL, question TEXT NOT NULL, intent TEXT NOT NULL, status TEXT NOT NULL,
    sql TEXT, columns TEXT, row_count INTEGER, feedback TEXT,
    PRIMARY KEY (conversation_id, number)
);
INSERT INTO conversations VALUES ('c1', NULL, 0);
INSERT INTO turns VALUES ('c1', 1, 0, 'how many orders?', 'write_query', 'answered',
                          'SELECT count(*) FROM orders', '["n"]', 1, NULL);
"""


def test_a_turn_keeps_its_database_for_the_follow_up(tmp_path: Path) -> None:
    store = ConversationStore(tmp_path / "conversations.sqlite")
    conversation = store.start()
    store.add_turn(conversation, "how many orders?", "write_query", "answered",
                   "SELECT count(*) FROM orders", ["n"], 1, "shop")  # fmt: skip
    store.add_turn(conversation, "zzqx", "write_query", "failed")  # no SQL: nothing to build on
    (prior,) = history(store, conversation)
    assert prior.source == "shop" and prior.sql == "SELECT count(*) FROM orders"


def test_a_store_from_before_turns_kept_their_database_still_opens(tmp_path: Path) -> None:
    path = tmp_path / "conversations.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(OLD_SCHEMA)
    store = ConversationStore(path)
    (old,) = store.turns("c1")
    assert old.question == "how many orders?" and old.source is None
    store.add_turn("c1", "now by month", "write_query", "answered", "SELECT 1", [], 1, "shop")
    assert [t.source for t in store.turns("c1")] == [None, "shop"]
    ConversationStore(path)  # opening it again adds nothing twice
