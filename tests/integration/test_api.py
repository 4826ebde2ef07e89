"""The library calls behind `index`, `sources` and `context`, on the embedded index."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from schemawise import api
from schemawise.errors import SchemawiseError
from schemawise.retrieve.settings import ContextSettings

SCHEMA = """
CREATE TABLE teams (team_id INTEGER PRIMARY KEY, team_name TEXT, league TEXT);
CREATE TABLE players (player_id INTEGER PRIMARY KEY, team_id INTEGER REFERENCES teams,
                      player_name TEXT, goals INTEGER);
INSERT INTO teams VALUES (1, 'Rovers', 'North'), (2, 'United', 'South');
INSERT INTO players VALUES (1, 1, 'Ada', 3), (2, 2, 'Bo', 5);
"""


def league_database(tmp_path: Path) -> Path:
    """The two-table league database, written as SQLite under `tmp_path`."""
    path = tmp_path / "league.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(SCHEMA)
    return path


def test_index_sources_and_context(embedded_url: str, tmp_path: Path) -> None:
    path = league_database(tmp_path)
    said: list[str] = []
    report = api.index(f"sqlite:///{path}", "league", index_url=embedded_url, progress=said.append)
    assert report.documents > 0 and said  # it reports progress as it goes
    assert "league" in {s["source"] for s in api.sources(index_url=embedded_url)}
    pack = api.context(
        "goals of players per team in the North league", sources=["league"],
        index_url=embedded_url,
    )  # fmt: skip
    assert pack.source == "league" and {"players", "teams"} <= {t.name for t in pack.tables}
    (league,) = [c for c in pack.columns if c.name == "league"]
    assert league.values[0] == "North"  # named in the question, so shown first
    # A budget given directly wins over the settings' and leaves the settings unchanged.
    settings = ContextSettings(budget=10_000)
    small = api.context(
        "goals of players per team", sources=["league"], budget=30, settings=settings,
        index_url=embedded_url,
    )  # fmt: skip
    assert small.tokens < pack.tokens and settings.budget == 10_000
    with pytest.raises(SchemawiseError, match="No indexed source"):
        api.context("goals", sources=["nope"], index_url=embedded_url)


def test_indexing_removes_documents_earlier_benchmarks_left_behind(
    embedded_url: str, tmp_path: Path
) -> None:
    """Earlier releases' `bench linking` wrote `spider/…` documents into the user's index
    without registering them; the next `index` removes them and leaves registered ones."""
    import psycopg

    from schemawise.index import store
    from schemawise.index.cards import documents
    from schemawise.index.embed import get_embedder
    from schemawise.runner import load_graph

    path = league_database(tmp_path)
    url = f"sqlite:///{path}"
    api.index(url, "spider/registered", index_url=embedded_url)
    embedder = get_embedder()
    with psycopg.connect(embedded_url) as conn:
        store.ensure_schema(conn, embedder.dim)
        store.replace_source(conn, "spider/leftover", documents("spider/leftover",
                             load_graph(url)), embedder)  # fmt: skip
        conn.commit()
    api.index(url, "league", index_url=embedded_url)
    with psycopg.connect(embedded_url) as conn:
        counts = dict(
            conn.execute(
                "SELECT source, count(*) FROM schemawise.index_documents "
                "WHERE source LIKE 'spider/%' GROUP BY source"
            ).fetchall()
        )
    assert "spider/leftover" not in counts and counts.get("spider/registered", 0) > 0


def test_an_interrupted_index_keeps_nothing_half_done(
    embedded_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C after the documents were written but before the source was registered: the
    one transaction rolls back, and the CLI says so with exit code 130."""
    import psycopg
    from typer.testing import CliRunner

    from schemawise.cli import app
    from schemawise.index import sources

    path = league_database(tmp_path)

    def interrupt(url: str) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(sources, "redact", interrupt)  # called for the registration row
    result = CliRunner().invoke(
        app, ["index", f"sqlite:///{path}", "--name", "halfway", "--index-url", embedded_url]
    )
    assert result.exit_code == 130
    assert "nothing half-done was kept" in " ".join(result.output.split())
    with psycopg.connect(embedded_url) as conn:
        left = conn.execute(
            "SELECT count(*) FROM schemawise.index_documents WHERE source = 'halfway'"
        ).fetchone()
    assert left == (0,)


def test_check_and_run_reuse_the_indexed_graph_while_the_catalogue_is_unchanged(
    embedded_url: str, tmp_path: Path
) -> None:
    import json

    from typer.testing import CliRunner

    from schemawise.cli import app

    path = league_database(tmp_path)
    url = f"sqlite:///{path}"
    cli = CliRunner()
    query = ["--json", "--sql", "SELECT count(*) FROM players"]
    before = json.loads(cli.invoke(app, ["check", url, *query]).stdout)
    assert before["graph_origin"] == "extracted"  # not indexed yet
    api.index(url, "league_reuse", index_url=embedded_url)
    checked = json.loads(cli.invoke(app, ["check", url, *query]).stdout)
    ran = json.loads(cli.invoke(app, ["run", url, *query]).stdout)
    assert checked["graph_origin"] == ran["graph_origin"] == "index"
    assert ran["result"]["rows"] == [[2]]
    with sqlite3.connect(path) as conn:  # the catalogue changes: the stored graph is stale
        conn.execute("ALTER TABLE players ADD COLUMN assists INTEGER")
    stale = cli.invoke(app, ["check", url, "--json", "--sql", "SELECT assists FROM players"])
    doc = json.loads(stale.stdout)
    assert doc["graph_origin"] == "extracted" and doc["ok"]  # the new column is known


def test_a_source_taken_out_of_the_index_leaves_the_others(
    embedded_url: str, tmp_path: Path
) -> None:
    import psycopg

    path = league_database(tmp_path)
    for name in ("league_gone", "league_gone_too", "league_kept"):
        api.index(f"sqlite:///{path}", name, index_url=embedded_url, profile=False)
    documents = api.remove_source("league_gone", index_url=embedded_url)
    assert documents > 0
    listed = {s["source"] for s in api.sources(index_url=embedded_url)}
    assert "league_gone" not in listed and {"league_gone_too", "league_kept"} <= listed
    with psycopg.connect(embedded_url) as conn:
        left = conn.execute(
            "SELECT (SELECT count(*) FROM schemawise.index_documents WHERE source = %(s)s), "
            "(SELECT count(*) FROM schemawise.index_vocabulary WHERE source = %(s)s)",
            {"s": "league_gone"},
        ).fetchone()
    assert left == (0, 0)
    kept = api.context("goals per team", sources=["league_kept"], index_url=embedded_url)
    assert kept.tables
    with pytest.raises(SchemawiseError, match="No indexed source 'league_gone'") as raised:
        api.remove_source("league_gone", index_url=embedded_url)
    assert "league_kept" in (raised.value.hint or "")
