"""The conversation store (real SQLite): turns keep the database they were answered from and
the questions they were read with, and a store written before they did opens with its turns
intact."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from schemawise.agent.conversation import ConversationStore, add_column

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


def test_a_turn_keeps_its_database_and_what_it_was_read_with(tmp_path: Path) -> None:
    store = ConversationStore(tmp_path / "conversations.sqlite")
    conversation = store.start()
    store.add_turn(conversation, "how many orders?", "write_query", "answered",
                   "SELECT count(*) FROM orders", ["n"], 1, "shop")  # fmt: skip
    store.add_turn(conversation, "by month", "write_query", "answered", "SELECT 2", ["m"], 12,
                   "shop", "how many orders?")  # fmt: skip
    first, second = store.turns(conversation)
    assert (first.source, first.follows) == ("shop", "")
    assert (second.source, second.follows) == ("shop", "how many orders?")
    assert second.prior().sql == "SELECT 2"


def test_a_store_from_before_turns_kept_their_database_still_opens(tmp_path: Path) -> None:
    path = tmp_path / "conversations.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(OLD_SCHEMA)
    store = ConversationStore(path)
    (old,) = store.turns("c1")
    assert old.question == "how many orders?" and old.source is None and old.follows == ""
    store.add_turn("c1", "now by month", "write_query", "answered", "SELECT 1", [], 1, "shop",
                   "how many orders?")  # fmt: skip
    assert [t.source for t in store.turns("c1")] == [None, "shop"]
    ConversationStore(path)  # opening it again adds nothing twice


def test_a_column_another_process_added_first_is_no_error(tmp_path: Path) -> None:
    path = tmp_path / "conversations.sqlite"
    ConversationStore(path)  # every column there: as if another process had just added them
    with sqlite3.connect(path) as conn:
        add_column(conn, "follows", "TEXT")  # the race's loser: "duplicate column", ignored
        with pytest.raises(sqlite3.OperationalError):
            add_column(conn, "x,", "TEXT")  # any other failure (here a syntax error) is raised
