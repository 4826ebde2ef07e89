"""Every command twice: for people (readable lines, never a JSON document) and with --json
(exactly the contract docs/json.md writes down, read back by tests/contracts.py)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from typer.testing import CliRunner

from schemawise.agent.assistant import Reply
from schemawise.cli import app
from schemawise.db.embedded import database_url
from schemawise.demo.recruiting import RecruitingSizes, build
from schemawise.graph.paths import JoinPath
from schemawise.retrieve.context import ContextPack
from schemawise.validate.check import CheckResult
from tests.contracts import assert_matches, section_fields

runner = CliRunner()


def is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def both(args: list[str], exit_code: int = 0) -> tuple[str, dict[str, object]]:
    """The command's output for people and its JSON document."""
    human = runner.invoke(app, args)
    assert human.exit_code == exit_code, human.output
    assert human.stdout.strip(), f"{args}: nothing printed"
    assert not is_json(human.stdout), f"{args}: a person got JSON:\n{human.stdout[:300]}"
    scripted = runner.invoke(app, [*args, "--json"])
    assert scripted.exit_code == exit_code, scripted.output
    doc = json.loads(scripted.stdout)
    assert isinstance(doc, dict)
    return human.stdout, doc


@pytest.fixture(scope="module")
def chinook_url(bench_dir: Path) -> str:
    return f"sqlite:///{bench_dir / 'chinook' / 'chinook.sqlite'}"


def test_index_sync_and_sources(demo_source: str) -> None:
    text, doc = both(["index", "embedded/assistant_demo", "--name", demo_source, "--no-profile"])
    assert f"indexed {demo_source}:" in text and "tables" in text and "version" in text
    assert_matches("index --json", doc)
    text, doc = both(["sync", demo_source])
    assert f"synced {demo_source}:" in text
    assert_matches("sync --json", doc)
    for entry in doc["synced"]:  # type: ignore[attr-defined]
        assert_matches("index --json", entry)
    text, doc = both(["sources"])
    assert demo_source in text
    assert_matches("sources --json", doc)
    listed = [s for s in doc["sources"] if s["source"] == demo_source]  # type: ignore[attr-defined]
    assert set(listed[0]) == {"source", "url", "version", "documents", "indexed_at", "tables",
                              "edges", "options"}  # fmt: skip


def test_context(demo_source: str) -> None:
    text, doc = both(["context", "which customers placed orders", "--source", demo_source])
    assert "orders" in text
    assert set(doc) == section_fields("ContextPack") == set(ContextPack.model_fields)


def test_check_and_run(chinook_url: str) -> None:
    sql = "SELECT count(*) FROM Artist"
    text, doc = both(["check", chinook_url, "--sql", sql])
    assert "ok" in text
    assert set(doc) == set(CheckResult.model_fields) | {"graph_origin"}
    text, doc = both(["run", chinook_url, "--sql", sql])
    assert "1 row in" in text
    assert set(doc) == set(CheckResult.model_fields) | section_fields("Run")


def test_path(chinook_url: str) -> None:
    text, doc = both(["path", chinook_url, "Artist", "Genre"])
    assert "JOIN" in text
    assert set(doc) == set(JoinPath.model_fields)


def test_db_and_model_status(embedded_url: str) -> None:
    text, doc = both(["db", "status"])
    assert text.startswith("running")
    assert_matches("db status --json", doc)
    text, doc = both(["model", "status"])
    assert "1.5b" in text
    assert_matches("model status --json", doc)


def test_failures_log(schemawise_home: Path) -> None:
    text, doc = both(["failures"])
    assert "generations" in text or "fixed" in text or "failed" in text
    assert_matches("failures --json", doc)


def test_eval_report(chinook_url: str, tmp_path: Path) -> None:
    golden = tmp_path / "golden.yaml"
    golden.write_text("- question: how many artists?\n  gold: SELECT count(*) FROM Artist\n")
    database = chinook_url.removeprefix("sqlite:///")
    args = ["eval", "--dataset", "golden", "--golden", str(golden), "--data", f"sqlite:///{database}",
            "--gold-as-prediction"]  # fmt: skip
    text, doc = both(args)
    assert "execution accuracy: 1" in text
    assert_matches("eval --json", doc)


def test_bench_reports_read_as_text_unless_json(tmp_path: Path, bench_dir: Path) -> None:
    source = bench_dir / "spider" / "database" / "concert_singer"
    shutil.copytree(source, tmp_path / "concert_singer")
    text, doc = both(["bench", "fk-recovery", str(tmp_path)])
    assert "pooled:" in text and "precision:" in text
    assert_matches("bench fk-recovery", doc)


@pytest.fixture(scope="module")
def rows_url(embedded_url: str) -> Iterator[str]:
    """A small recruiting schema in its own database of the embedded server."""
    with psycopg.connect(database_url(embedded_url, "postgres"), autocommit=True) as conn:
        conn.execute('DROP DATABASE IF EXISTS "cli_rows" WITH (FORCE)')
        conn.execute('CREATE DATABASE "cli_rows"')
    build(database_url(embedded_url, "cli_rows"),
          RecruitingSizes(owners=6, assignments=120, candidates=20, big_owners=1,
                          medium_owners=2))  # fmt: skip
    yield "embedded/cli_rows"


def test_rows_commands(rows_url: str) -> None:
    table = "recruiting.assignments"
    enable = ["rows", "enable", rows_url, table, "--text", "title,description", "--tenant",
              "owner_id"]  # fmt: skip
    text, doc = both(enable)
    assert f"searchable {table}" in text and "rows backfill" in text
    assert_matches("rows enable --json", doc)
    text, doc = both(["rows", "backfill", rows_url])
    assert "backfill done:" in text
    assert_matches("rows backfill --json", doc)
    text, doc = both(["rows", "status", rows_url])
    assert table in text and "embedded" in text
    assert_matches("rows status --json", doc)
    text, doc = both(["rows", "search", rows_url, table, "nurse", "--tenant", "1"])
    assert "uncalibrated" in text
    assert_matches("rows search --json", doc)
    # People see what each row says (its searched text), not only its key.
    assert "title" in text and "description" in text
    assert doc["rows"] and all(set(r["text"]) == {"title", "description"} for r in doc["rows"])
    # Disabling twice is an error: once for people, enable again, once for scripts.
    human = runner.invoke(app, ["rows", "disable", rows_url, table])
    assert human.exit_code == 0 and human.stdout.strip() == f"row search removed from {table}"
    assert runner.invoke(app, enable).exit_code == 0
    scripted = runner.invoke(app, ["rows", "disable", rows_url, table, "--json"])
    assert scripted.exit_code == 0, scripted.output
    assert_matches("rows disable --json", json.loads(scripted.stdout))


def test_startup_bench_report() -> None:
    text, doc = both(["bench", "startup", "--runs", "1"])
    assert "schemawise --version:" in text and "p50:" in text
    assert_matches("bench startup", doc)
    assert set(doc["seconds"]) == {  # type: ignore[call-overload]
        "python -c pass", "schemawise --version", "schemawise --help",
        "schemawise check --help", "schemawise context --help",
    }  # fmt: skip


def test_doctor(embedded_url: str) -> None:
    text, doc = both(["doctor", "embedded"])
    assert "ok" in text
    assert_matches("doctor --json", doc)
    assert all(set(f) == {"severity", "check", "message", "fix"} for f in doc["findings"])  # type: ignore[attr-defined]


def test_ask_without_a_model(demo_source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SCHEMAWISE_LLM", raising=False)
    monkeypatch.setenv("SCHEMAWISE_CONFIG", "/nonexistent/config.toml")
    text, doc = both(["ask", "how many orders shipped?", "--source", demo_source], exit_code=1)
    assert "prompt" in text.lower()
    assert set(doc) == set(Reply.model_fields) and doc["status"] == "no_model"


def test_sources_check_says_which_databases_changed_since_indexed(
    embedded_url: str, bench_dir: Path, tmp_path: Path
) -> None:
    import sqlite3

    from schemawise import api
    from schemawise.index.store import remove_sources

    copy, gone = tmp_path / "drifting.sqlite", tmp_path / "vanishing.sqlite"
    shutil.copy(bench_dir / "chinook" / "chinook.sqlite", copy)
    shutil.copy(bench_dir / "chinook" / "chinook.sqlite", gone)
    api.index(f"sqlite:///{copy}", "drifting", index_url=embedded_url, profile=False)
    api.index(f"sqlite:///{gone}", "vanishing", index_url=embedded_url, profile=False)
    try:
        fresh = api.source_freshness(index_url=embedded_url)
        assert fresh["drifting"]["current"] is True and fresh["vanishing"]["current"] is True
        with sqlite3.connect(copy) as conn:
            conn.execute("ALTER TABLE Track ADD COLUMN tracking_no TEXT")
        gone.unlink()
        human = runner.invoke(app, ["sources", "--check"])
        assert human.exit_code == 0, human.output
        assert "changed since indexed: run `schemawise sync drifting`" in human.stdout
        scripted = json.loads(runner.invoke(app, ["sources", "--check", "--json"]).stdout)
        by_name = {s["source"]: s for s in scripted["sources"]}
        assert by_name["drifting"]["current"] is False
        assert by_name["vanishing"]["current"] is None
        assert by_name["vanishing"]["why"].startswith("not read:")
    finally:
        with psycopg.connect(embedded_url) as conn:
            for name in ("drifting", "vanishing"):
                remove_sources(conn, name)
                conn.execute("DELETE FROM schemawise.index_sources WHERE source = %s", (name,))


def test_sync_goes_on_past_a_source_it_cannot_reach(
    demo_source: str, embedded_url: str, bench_dir: Path, tmp_path: Path
) -> None:
    from schemawise import api
    from schemawise.index.store import remove_sources

    copy = tmp_path / "gone.sqlite"
    shutil.copy(bench_dir / "chinook" / "chinook.sqlite", copy)
    api.index(f"sqlite:///{copy}", "gone_db", index_url=embedded_url, profile=False)
    copy.unlink()
    try:
        human = runner.invoke(app, ["sync"])
        assert human.exit_code == 2
        assert f"synced {demo_source}:" in human.stdout
        assert "not synced gone_db:" in human.stderr
        scripted = runner.invoke(app, ["sync", "--json"])
        assert scripted.exit_code == 2
        doc = json.loads(scripted.stdout)
        assert_matches("sync --json", doc)
        assert [f["source"] for f in doc["failed"]] == ["gone_db"]
        assert demo_source in [s["source"] for s in doc["synced"]]
    finally:
        with psycopg.connect(embedded_url) as conn:
            remove_sources(conn, "gone_db")
            conn.execute("DELETE FROM schemawise.index_sources WHERE source = 'gone_db'")


def test_sync_connects_without_the_password_the_index_did_not_keep(
    demo_source: str, embedded_url: str
) -> None:
    # The index stores `user:***@host`. Syncing used to refuse it ("pass the full URL"); it
    # now leaves the password to libpq (PGPASSWORD, ~/.pgpass), as a cron job keeps it. The
    # embedded server trusts local logins, so any password given here is not checked.
    from schemawise import api
    from schemawise.index.store import remove_sources

    url = database_url(embedded_url, "assistant_demo").replace("postgres@", "postgres:unused@", 1)
    assert ":unused@" in url
    api.index(url, "stored_redacted", index_url=embedded_url, profile=False)
    try:
        listed = {s["source"]: s["url"] for s in api.sources(index_url=embedded_url)}
        assert ":***@" in listed["stored_redacted"] and "unused" not in listed["stored_redacted"]
        synced = runner.invoke(app, ["sync", "stored_redacted", "--json"])
        assert synced.exit_code == 0, synced.output
        [report] = json.loads(synced.stdout)["synced"]
        # The same database: no warning that the name now holds another one, and the URL is
        # kept as stored, so `check` with the URL as indexed still finds the indexed graph.
        assert not [p for p in report["problems"] if p["stage"] == "index"], report["problems"]
        after = {s["source"]: s["url"] for s in api.sources(index_url=embedded_url)}
        assert after["stored_redacted"] == listed["stored_redacted"]
    finally:
        with psycopg.connect(embedded_url) as conn:
            remove_sources(conn, "stored_redacted")
            conn.execute("DELETE FROM schemawise.index_sources WHERE source = 'stored_redacted'")


def test_a_schema_that_is_not_there_is_an_error_with_the_ones_that_are(embedded_url: str) -> None:
    result = runner.invoke(app, ["graph", "embedded", "--schema", "nosuch"])
    assert result.exit_code == 2
    assert "No schema nosuch" in result.stderr and "Schemas there:" in result.stderr
