"""index → context → sync on real databases, with the embedded Postgres as the index."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest

from schemawise.errors import SchemawiseError
from schemawise.index import store
from schemawise.index.embed import get_embedder
from schemawise.index.sources import index_source, list_sources, load_graphs, load_metadata
from schemawise.retrieve.context import build_context
from schemawise.retrieve.settings import ContextSettings

SCHEMA = """
CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, name TEXT, city TEXT);
CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers,
                     total REAL, ordered_at TEXT);
CREATE TABLE order_items (item_id INTEGER PRIMARY KEY, order_id INTEGER REFERENCES orders,
                          product_id INTEGER REFERENCES products, quantity INTEGER);
CREATE TABLE products (product_id INTEGER PRIMARY KEY, title TEXT, price REAL);
CREATE TABLE warehouses (warehouse_id INTEGER PRIMARY KEY, city TEXT, capacity INTEGER);
"""


@pytest.fixture()
def shopdb(tmp_path: Path) -> Path:
    path = tmp_path / "tinyshop.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(SCHEMA)
    return path


def _pack(url: str, question: str) -> object:
    with psycopg.connect(url) as conn:
        graphs = load_graphs(conn, ["tinyshop"])
        return build_context(conn, question, graphs, get_embedder(), sources=["tinyshop"])


def test_index_context_and_drift(embedded_url: str, shopdb: Path) -> None:
    first = index_source(embedded_url, f"sqlite:///{shopdb}", "tinyshop")
    # The database card, 5 table cards, 17 columns, 3 join paths (one per foreign key) and 2
    # two-join chains (customers-orders-order_items, orders-order_items-products).
    assert first.documents == 1 + 5 + 17 + 3 + 2 and first.embedded == first.documents
    again = index_source(embedded_url, f"sqlite:///{shopdb}", "tinyshop")
    assert again.embedded == 0 and again.version == first.version  # nothing changed
    pack = _pack(embedded_url, "quantity of each product title ordered by customers")
    names = [t.name for t in pack.tables]  # type: ignore[attr-defined]
    assert {"order_items", "products"} <= set(names)
    assert pack.join_paths and pack.tokens > 0 and "CREATE TABLE" in pack.text  # type: ignore[attr-defined]
    for table in pack.tables:  # type: ignore[attr-defined]
        # A table the search matched has a score, bridge or not; reasons are not repeated.
        matched = table.reasons != ["joins the chosen tables"]
        assert (table.score > 0) is matched and len(set(table.reasons)) == len(table.reasons)
    # Drift: rename a column, add a table, drop a table.
    with sqlite3.connect(shopdb) as conn:
        conn.executescript(
            "ALTER TABLE products RENAME COLUMN title TO product_name;"
            "CREATE TABLE reviews (review_id INTEGER PRIMARY KEY, product_id INTEGER "
            "REFERENCES products, stars INTEGER);"
            "DROP TABLE warehouses;"
        )
    synced = index_source(embedded_url, f"sqlite:///{shopdb}", "tinyshop")
    assert synced.version != first.version and synced.previous_version == first.version
    # Changed: the products card, the renamed column, the database card; new: the reviews
    # card, its 3 columns, its join path to products and the chain order_items-products-
    # reviews; removed: the warehouses card and its 3 columns, and the old column document.
    assert synced.removed == 1 + 3 + 1
    assert 3 + 5 <= synced.embedded <= 3 + 5 + 1  # + the orders card if its text moved
    with psycopg.connect(embedded_url) as conn:
        found = conn.execute(
            "SELECT text FROM schemawise.index_documents WHERE source = 'tinyshop'"
        )
        texts = [r[0] for r in found.fetchall()]
    assert not any("warehouse" in t for t in texts)
    assert not any(t.startswith("title of products") for t in texts)
    after = _pack(embedded_url, "product name and stars of reviews")
    for path in after.join_paths:  # type: ignore[attr-defined]
        for edge in path["edges"]:
            assert all(c != "title" and p != "title" for c, p in edge["on"])


def test_budget_and_errors(embedded_url: str, shopdb: Path) -> None:
    index_source(embedded_url, f"sqlite:///{shopdb}", "tinyshop")
    with psycopg.connect(embedded_url) as conn:
        graphs = load_graphs(conn, ["tinyshop"])
        full = build_context(conn, "orders with their items and products", graphs, get_embedder())
        small = build_context(
            conn, "orders with their items and products", graphs, get_embedder(),
            settings=ContextSettings(budget=40),
        )  # fmt: skip
        assert small.tokens < full.tokens and small.truncated and small.budget == 40
        # Within the budget, or the smallest honest pack (the first table and its keys), said so.
        assert small.tokens <= 40 or small.over_budget
        # Whole tables go from the lowest score up, never the first; none is left empty.
        gone = {d.name for d in small.dropped if d.kind == "table"}
        assert [t.name for t in small.tables] == [t.name for t in full.tables if t.name not in gone]
        assert small.tables[0].name == full.tables[0].name and "(\n\n);" not in small.text
        assert not full.truncated and full.budget is None and not full.dropped
        with pytest.raises(SchemawiseError, match="No indexed source"):
            load_graphs(conn, ["nope"])
        with pytest.raises(SchemawiseError, match="question is empty"):
            build_context(conn, "  ", graphs, get_embedder())
        assert any(s["source"] == "tinyshop" for s in list_sources(conn))


def test_documents_of_another_schema_version_are_not_served(
    embedded_url: str, shopdb: Path
) -> None:
    index_source(embedded_url, f"sqlite:///{shopdb}", "tinyshop")
    with psycopg.connect(embedded_url) as conn:
        graphs = load_graphs(conn, ["tinyshop"])
        before = build_context(
            conn, "customers and their orders", graphs, get_embedder(), sources=["tinyshop"]
        )
        assert before.tables
        # A sync that stopped half-way: the registered version moved, the documents did not.
        conn.execute(
            "UPDATE schemawise.index_sources SET version = 'newer' WHERE source = 'tinyshop'"
        )
        conn.commit()
        after = build_context(
            conn, "customers and their orders", graphs, get_embedder(), sources=["tinyshop"]
        )
        assert after.tables == []
    index_source(embedded_url, f"sqlite:///{shopdb}", "tinyshop")  # a full sync serves again


def test_ranker_and_column_filter_hooks(embedded_url: str, shopdb: Path) -> None:
    index_source(embedded_url, f"sqlite:///{shopdb}", "tinyshop")
    seen: list[list[str]] = []

    def ranker(question: str, candidates: list) -> list:  # type: ignore[type-arg]
        seen.append([c.table for c in candidates])
        return [c for c in candidates if c.table == "products"]

    with psycopg.connect(embedded_url) as conn:
        graphs = load_graphs(conn, ["tinyshop"])
        pack = build_context(
            conn, "quantity of each product title ordered by customers", graphs, get_embedder(),
            sources=["tinyshop"],
            settings=ContextSettings(ranker=ranker, column_filter=lambda q, picks: []),
        )  # fmt: skip
    assert seen and len(seen[0]) >= 2  # the ranker saw the structural choice
    assert [t.name for t in pack.tables] == ["products"]
    # The filter dropped every column but keys, which stay so the SQL can still be written.
    assert [c.name for c in pack.columns] == ["product_id"]


MUSIC = """
CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, citizenship TEXT,
                     birth_year INTEGER, net_worth REAL);
CREATE TABLE song (song_id INTEGER PRIMARY KEY, singer_id INTEGER REFERENCES singer,
                   title TEXT, sales REAL);
"""
CONCERTS = """
CREATE TABLE stadium (stadium_id INTEGER PRIMARY KEY, name TEXT, capacity INTEGER);
CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INTEGER,
                     song_name TEXT, song_release_year TEXT);
CREATE TABLE concert (concert_id INTEGER PRIMARY KEY, concert_name TEXT, year TEXT,
                      stadium_id INTEGER REFERENCES stadium);
CREATE TABLE singer_in_concert (concert_id INTEGER REFERENCES concert,
                                singer_id INTEGER REFERENCES singer);
"""


def test_pooled_sources_choose_the_one_with_the_questions_words(
    embedded_url: str, tmp_path: Path
) -> None:
    for name, script in (("music", MUSIC), ("concerts", CONCERTS)):
        with sqlite3.connect(tmp_path / f"{name}.sqlite") as conn:
            conn.executescript(script)
        index_source(embedded_url, f"sqlite:///{tmp_path / name}.sqlite", name)
    with psycopg.connect(embedded_url) as conn:
        graphs = load_graphs(conn, ["music", "concerts"])
        # Both have singers; only one knows citizenship and birth year.
        pack = build_context(
            conn, "What are the birth year and citizenship of singers?", graphs,
            get_embedder(), sources=["music", "concerts"],
        )  # fmt: skip
        assert pack.source == "music"
        assert next(t.name for t in pack.tables) == "singer"
        vocabulary = dict(
            conn.execute(
                "SELECT source, count(*) FROM schemawise.index_vocabulary "
                "WHERE lexeme = 'citizenship' GROUP BY source"
            ).fetchall()
        )
        assert set(vocabulary) == {"music"}
        # A shorter word of the same stem finds it too (citizens → citizen → citizenship).
        found = store.words_found(conn, "French citizens", ["music", "concerts"])
        assert found == {"music": {"citizen"}}


def test_a_value_the_question_names_is_shown_with_its_column(
    embedded_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "cities.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(SCHEMA)
        cities = ["Paris", "Paris", "Paris", "London", "London", "Lyon"]
        conn.executemany(
            "INSERT INTO customers VALUES (?, ?, ?)",
            [(i, f"customer {i}", city) for i, city in enumerate(cities)],
        )
    index_source(embedded_url, f"sqlite:///{path}", "cities")
    with psycopg.connect(embedded_url) as conn:
        pack = build_context(
            conn, "How many customers live in Lyon?", load_graphs(conn, ["cities"]),
            get_embedder(), sources=["cities"], metadata=load_metadata(conn, ["cities"]),
        )  # fmt: skip
    (city,) = [c for c in pack.columns if (c.table, c.name) == ("customers", "city")]
    # Lyon is the least common city, yet it comes first: the question names it.
    assert city.values[0] == "Lyon" and len(city.values) <= 3
    assert "city TEXT, -- e.g. 'Lyon'" in pack.text or "city TEXT -- e.g. 'Lyon'" in pack.text
    assert "customer_id INTEGER PRIMARY KEY" in pack.text


def test_schema_check_does_not_wait_for_a_writer(embedded_url: str) -> None:
    """Indexing one source while another is written: the schema check takes no lock a
    writer holds off (an ALTER TABLE would, and deadlocked two indexing runs)."""
    dim = get_embedder().dim
    with psycopg.connect(embedded_url) as setup:
        store.ensure_schema(setup, dim)
    with psycopg.connect(embedded_url) as writer, psycopg.connect(embedded_url) as checker:
        writer.execute("UPDATE schemawise.index_documents SET source = source WHERE false")
        checker.execute("SET lock_timeout = '2s'")
        store.ensure_schema(checker, dim)  # would time out waiting for the writer
        writer.rollback()
