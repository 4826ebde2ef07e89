"""Profiles and query-log usage on real databases, and what they change in the context pack."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import psycopg
import pytest

from schemawise.db import connect
from schemawise.enrich.profile import profile_source
from schemawise.enrich.querylog import read_log
from schemawise.enrich.usage import usage_from_log
from schemawise.errors import SchemawiseError
from schemawise.graph.extract import ExtractOptions, extract_graph
from schemawise.index import store
from schemawise.index.embed import get_embedder
from schemawise.index.sources import index_source, load_graphs, load_metadata
from schemawise.retrieve.context import build_context
from schemawise.retrieve.reading import SEARCHED_KINDS


def test_postgres_profiles_come_from_pg_stats(embedded_url: str) -> None:
    with psycopg.connect(embedded_url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS profiled CASCADE; CREATE SCHEMA profiled")
        conn.execute(
            "CREATE TABLE profiled.tickets (ticket_id int PRIMARY KEY, state text, note text)"
        )
        conn.execute(
            "INSERT INTO profiled.tickets SELECT i, (ARRAY['open','closed','waiting'])[i % 3 + 1],"
            " CASE WHEN i % 4 = 0 THEN NULL ELSE 'note ' || i END FROM generate_series(1, 3000) i"
        )
        conn.execute("ANALYZE profiled.tickets")
    with connect(embedded_url) as source:
        graph = extract_graph(source, ExtractOptions(data_checks=False, infer=False))
        profiles = profile_source(source, graph)
    state = profiles["profiled.tickets.state"]
    assert state.basis == "pg_stats" and state.distinct == 3
    assert state.values == ["closed", "open", "waiting"]
    note = profiles["profiled.tickets.note"]
    assert note.values == [] and abs((note.null_fraction or 0) - 0.25) < 0.03
    assert (note.distinct or 0) > 1000  # a negative n_distinct scaled by the row count
    with psycopg.connect(embedded_url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA profiled CASCADE")


def test_a_postgres_column_of_distinct_names_keeps_its_values(embedded_url: str) -> None:
    # A small dimension's names are all distinct: pg_stats keeps no most common values for
    # them, only the histogram's bounds. They are its values (the value index finds
    # "laptops", "North America"), and with few of them, the whole list.
    with psycopg.connect(embedded_url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS dims CASCADE; CREATE SCHEMA dims")
        conn.execute("CREATE TABLE dims.regions (region_id int PRIMARY KEY, region_name text)")
        conn.execute(
            "INSERT INTO dims.regions VALUES (1, 'North America'), (2, 'Europe'), "
            "(3, 'Asia Pacific'), (4, 'Latin America')"
        )
        conn.execute("CREATE TABLE dims.products (prod_id int PRIMARY KEY, prod_nm text)")
        conn.execute(
            "INSERT INTO dims.products "
            "SELECT i, 'Laptop model ' || i FROM generate_series(1, 500) i"
        )
        conn.execute("ANALYZE dims.regions; ANALYZE dims.products")
    try:
        with connect(embedded_url) as source:
            graph = extract_graph(source, ExtractOptions(data_checks=False, infer=False))
            profiles = profile_source(source, graph)
        regions = profiles["dims.regions.region_name"]
        assert regions.basis == "pg_stats"
        assert regions.values == ["Asia Pacific", "Europe", "Latin America", "North America"]
        products = profiles["dims.products.prod_nm"]
        assert products.values == []  # too many for a list
        assert 50 <= len(products.seen) <= 100
        assert all(v.startswith("Laptop") for v in products.seen)
    finally:
        with psycopg.connect(embedded_url, autocommit=True) as conn:
            conn.execute("DROP SCHEMA dims CASCADE")


def test_sqlite_profiles_are_sampled_with_a_row_limit(tmp_path: Path) -> None:
    path = tmp_path / "big.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE events (event_id INTEGER PRIMARY KEY, kind TEXT)")
        conn.executemany(
            "INSERT INTO events VALUES (?, ?)", [(i, ("view", "buy")[i % 2]) for i in range(5000)]
        )
    with connect(f"sqlite:///{path}") as source:
        graph = extract_graph(source, ExtractOptions(data_checks=False, infer=False))
        profiles = profile_source(source, graph, rows=100)
    kind = profiles["events.kind"]
    assert kind.basis == "sample" and kind.values == ["buy", "view"]
    # 100 sampled rows: the key's distinct count is a lower bound, not the 5,000 rows.
    assert profiles["events.event_id"].distinct == 100


def test_index_with_query_log_and_profiles_changes_the_pack(
    embedded_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "helpdesk.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "CREATE TABLE agents (agent_id INTEGER PRIMARY KEY, name TEXT, team TEXT);"
            "CREATE TABLE tickets (ticket_id INTEGER PRIMARY KEY, agent_id INTEGER "
            "REFERENCES agents, state TEXT, opened_at TEXT, subject TEXT);"
        )
        conn.executemany(
            "INSERT INTO agents VALUES (?, ?, ?)", [(i, f"agent {i}", "blue") for i in range(10)]
        )
        conn.executemany(
            "INSERT INTO tickets VALUES (?, ?, ?, ?, ?)",
            [(i, i % 10, ("open", "escalated")[i % 2], "2024-01-01", "s") for i in range(200)],
        )
    log = tmp_path / "log.jsonl"
    log.write_text(
        "\n".join(
            json.dumps({"sql": sql})
            for sql in [
                "SELECT a.name, count(*) FROM tickets t JOIN agents a "
                "ON a.agent_id = t.agent_id GROUP BY a.name",
                "SELECT count(*) FROM tickets WHERE state = 'open'",
            ]
        )
    )
    index_source(embedded_url, f"sqlite:///{path}", "helpdesk", query_log=log)
    with psycopg.connect(embedded_url) as conn:
        meta = load_metadata(conn, ["helpdesk"])["helpdesk"]
        assert meta.usage is not None and meta.usage.tables == {"tickets": 2, "agents": 1}
        assert meta.profiles["tickets.state"].values == ["escalated", "open"]
        doc = conn.execute(
            "SELECT text FROM schemawise.index_documents WHERE id = 'helpdesk:column:tickets.state'"
        ).fetchone()
        assert doc is not None and "escalated" in doc[0]  # the values are searchable
        pack = build_context(
            conn, "how many escalated tickets per agent since 2024",
            load_graphs(conn, ["helpdesk"]), get_embedder(), sources=["helpdesk"],
            metadata={"helpdesk": meta},
        )  # fmt: skip
    why = {(c.table, c.name): c.reason for c in pack.columns}
    tier = {(c.table, c.name): c.tier for c in pack.columns}
    # Found through its values (in its document, or matched to the question) either way.
    assert tier[("tickets", "state")] == 1
    assert why[("tickets", "state")] in ("retrieved", "holds a value the question names")
    assert tier[("tickets", "opened_at")] == 1
    assert {t.name for t in pack.tables} == {"tickets", "agents"}
    assert any("SELECT a.name" in e for e in pack.examples)  # a logged query as the example


def test_sync_reuses_the_enrichment_it_was_indexed_with(
    embedded_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Indexed by relative paths, synced from another directory: the files are stored by
    their absolute paths."""
    from typer.testing import CliRunner

    from schemawise.cli import app

    path = tmp_path / "kept.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (note_id INTEGER PRIMARY KEY, body TEXT)")
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"sql": "SELECT body FROM notes"}) + "\n")
    runner = CliRunner()
    monkeypatch.chdir(tmp_path)
    first = runner.invoke(
        app, ["index", "sqlite:///kept.sqlite", "--name", "kept", "--query-log", "log.jsonl",
              "--index-url", embedded_url, "--json"],
    )  # fmt: skip
    assert first.exit_code == 0, first.output
    with sqlite3.connect(path) as conn:
        conn.execute("ALTER TABLE notes ADD COLUMN title TEXT")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    synced = runner.invoke(app, ["sync", "kept", "--index-url", embedded_url, "--json"])
    assert synced.exit_code == 0, synced.output
    assert json.loads(synced.stdout)["synced"][0]["embedded"] >= 1
    with psycopg.connect(embedded_url) as conn:
        meta = load_metadata(conn, ["kept"])["kept"]
    assert meta.usage is not None and meta.usage.tables == {"notes": 1}


def test_a_value_the_question_names_finds_its_table(embedded_url: str, tmp_path: Path) -> None:
    path = tmp_path / "atlas.sqlite"
    places = ["Anguilla", "Aruba", "Belize", "Bhutan", "Chad", "Fiji", "Gabon", "Haiti",
              "Iceland", "Jamaica", "Kenya", "Laos", "Malta", "Nauru", "Oman", "Palau"]  # fmt: skip
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "CREATE TABLE territory (code TEXT PRIMARY KEY, label TEXT, area REAL);"
            "CREATE TABLE team (team_id INTEGER PRIMARY KEY, title TEXT, founded INTEGER);"
            "CREATE TABLE venue (venue_id INTEGER PRIMARY KEY, title TEXT, seats INTEGER);"
        )
        conn.executemany(
            "INSERT INTO territory VALUES (?, ?, ?)",
            [(p[:3].upper(), p, 10.0 * i) for i, p in enumerate(places)],
        )
    index_source(embedded_url, f"sqlite:///{path}", "atlas")
    with psycopg.connect(embedded_url) as conn:
        kinds = dict(
            conn.execute(
                "SELECT kind, count(*) FROM schemawise.index_documents WHERE source = 'atlas' "
                "GROUP BY kind"
            ).fetchall()
        )
        # territory.label and territory.code hold more values than their cards show; the
        # numbers of territory.area are no names.
        assert kinds["values"] == 2
        question = "Tell me about Nauru and Palau"
        vector = get_embedder().embed([question])[0]
        best = store.search(conn, question, vector, kinds=SEARCHED_KINDS, sources=["atlas"])[0]
        assert (best.kind, best.table, best.column) == ("values", "territory", "label")
        graphs = load_graphs(conn, ["atlas"])
        pack = build_context(
            conn, question, graphs, get_embedder(), sources=["atlas"],
            metadata=load_metadata(conn, ["atlas"]),
        )  # fmt: skip
    assert pack.tables[0].name == "territory"
    label = next(c for c in pack.columns if c.name == "label")
    assert label.tier == 1


def test_query_log_from_pg_stat_statements(embedded_url: str, tmp_path: Path) -> None:
    # The embedded server does not ship the extension: a table with the view's columns, in
    # the same database, stands in for it so the real reading path runs.
    with psycopg.connect(embedded_url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS statlog CASCADE; CREATE SCHEMA statlog")
        conn.execute(
            "CREATE TABLE statlog.teams (team_id int PRIMARY KEY, title text);"
            "CREATE TABLE statlog.players (player_id int PRIMARY KEY, team int, nick text);"
            "CREATE TABLE public.pg_stat_statements "
            "(userid oid, dbid oid, query text, calls bigint)"
        )
        conn.execute(
            "INSERT INTO public.pg_stat_statements SELECT 10, oid, q, c FROM pg_database, "
            "(VALUES ('SELECT p.nick FROM statlog.players p JOIN statlog.teams t "
            "ON t.team_id = p.team WHERE t.title = $1', 40), "
            "('  select count(*) from statlog.teams', 2), "
            "('UPDATE statlog.teams SET title = $1', 500)) v(q, c) "
            "WHERE datname = current_database()"
        )
    try:
        with connect(embedded_url) as source:
            entries = read_log("pg_stat_statements", source)
        assert [(e.calls, e.sql.split()[0].lower()) for e in entries] == [
            (40, "select"),
            (2, "select"),
        ]  # most-run first; the UPDATE is no read
        with connect(embedded_url, schemas=["statlog"]) as source:
            graph = extract_graph(
                source, ExtractOptions(query_log=entries, data_checks=False, budget_seconds=5)
            )
        joined = [e for e in graph.edges if e.source == "query_log"]
        assert [(e.child_table, e.parent_table) for e in joined] == [
            ("statlog.players", "statlog.teams")
        ]
        usage = usage_from_log(entries, graph)
        assert usage.tables["statlog.teams"] == 42  # weighted by calls
    finally:
        with psycopg.connect(embedded_url, autocommit=True) as conn:
            conn.execute("DROP TABLE public.pg_stat_statements; DROP SCHEMA statlog CASCADE")


def test_pg_stat_statements_needs_a_postgres_source(tmp_path: Path) -> None:
    path = tmp_path / "plain.sqlite"
    sqlite3.connect(path).close()
    with connect(f"sqlite:///{path}") as source, pytest.raises(SchemawiseError) as caught:
        read_log("pg_stat_statements", source)
    assert "JSONL" in caught.value.hint
