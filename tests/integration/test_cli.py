"""The CLI end to end: JSON contracts, human output, exit codes, errors with hints."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from schemawise.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def chinook_url(bench_dir: Path) -> str:
    return f"sqlite:///{bench_dir / 'chinook' / 'chinook.sqlite'}"


def test_graph_json_contract(chinook_url: str) -> None:
    result = runner.invoke(app, ["graph", chinook_url, "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert set(doc) >= {"tables", "edges", "version", "partial", "problems"}
    table = doc["tables"][0]
    assert set(table) >= {"name", "kind", "row_count", "primary_key", "unique", "columns"}
    assert set(table["columns"][0]) >= {"name", "type", "nullable", "comment"}
    edge = doc["edges"][0]
    assert set(edge) >= {
        "child_table", "child_columns", "parent_table", "parent_columns",
        "cardinality", "source", "confidence", "evidence", "via",
    }  # fmt: skip
    assert {t["name"] for t in doc["tables"]} >= {"Album", "Track", "Invoice"}


def test_graph_for_people(chinook_url: str) -> None:
    result = runner.invoke(app, ["graph", chinook_url])
    assert result.exit_code == 0, result.output
    assert "InvoiceLine" in result.stdout and "edges (child → parent)" in result.stdout
    bridge = [line for line in result.stdout.splitlines() if "via PlaylistTrack" in line]
    assert bridge and all("(TrackId)" not in line for line in bridge)


def test_path_json_and_text(chinook_url: str) -> None:
    result = runner.invoke(app, ["path", chinook_url, "Artist", "Genre", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["tables"] == ["Artist", "Album", "Track", "Genre"]
    assert doc["grain"] == "one row per Track row"
    text = runner.invoke(app, ["path", chinook_url, "Artist", "Genre"])
    assert "JOIN Album.ArtistId = Artist.ArtistId" in text.stdout


def test_graph_and_path_preview_the_overlays_joins(tmp_path: Path, chinook_url: str) -> None:
    # Before indexing, a team sees what its overlay does: a denied join is gone from the graph
    # (and so from the path), a typo is listed as a problem with its hint.
    overlay = tmp_path / "schemawise.yml"
    overlay.write_text(
        "not_joins:\n  - {from: Album.ArtistId, to: Artist.ArtistId}\n"
        "joins:\n  - {from: Album.ArtistIdd, to: Artist.ArtistId}\n"
    )
    result = runner.invoke(app, ["graph", chinook_url, "--json", "--overlay", str(overlay)])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    pairs = {(e["child_table"], e["parent_table"]) for e in doc["edges"]}
    assert ("Album", "Artist") not in pairs and ("Track", "Album") in pairs
    assert doc["partial"] and "no column Album.ArtistIdd" in doc["problems"][0]["message"]
    text = runner.invoke(app, ["graph", chinook_url, "--overlay", str(overlay)])
    assert "PARTIAL RESULT" in text.stdout and "ArtistIdd" in text.stdout
    path = runner.invoke(app, ["path", chinook_url, "Artist", "Album", "--json",
                               "--overlay", str(overlay)])  # fmt: skip
    assert path.exit_code == 2 and "NoJoinPathError" in path.stdout
    # Stated, the join is back as the overlay's.
    overlay.write_text("joins:\n  - {from: Album.ArtistId, to: Artist.ArtistId}\n")
    stated = runner.invoke(app, ["graph", chinook_url, "--json", "--overlay", str(overlay)])
    (edge,) = [e for e in json.loads(stated.stdout)["edges"]
               if (e["child_table"], e["parent_table"]) == ("Album", "Artist")]  # fmt: skip
    assert edge["source"] == "overlay" and edge["cardinality"] == "many_to_one"


def test_query_log_option(tmp_path: Path, chinook_url: str) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(
        json.dumps(
            {
                "user": "a",
                "sql": "SELECT * FROM Customer c JOIN Employee e ON e.EmployeeId = c.SupportRepId",
            }
        )
        + "\n"
    )
    result = runner.invoke(app, ["graph", chinook_url, "--json", "--query-log", str(log)])
    assert result.exit_code == 0, result.output
    # Declared already: the log must not duplicate it.
    edges = json.loads(result.stdout)["edges"]
    assert sum(1 for e in edges if e["child_columns"] == ["SupportRepId"]) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["graph", "mysql://x/y"], "Unsupported database URL"),
        (["graph", "sqlite:////no/such.sqlite"], "No SQLite file"),
        (["path", "sqlite:////no/such.sqlite", "a"], "at least two tables"),
    ],
)
def test_errors_exit_2_with_hint(args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert message in result.output
    assert "hint:" in result.output


def test_unknown_table_in_path(chinook_url: str) -> None:
    result = runner.invoke(app, ["path", chinook_url, "Artists", "Genre", "--json"])
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["type"] == "TableNotFoundError" and "Artist" in error["hint"]


def test_fk_recovery_bench(tmp_path: Path, bench_dir: Path) -> None:
    for name in ("concert_singer", "dog_kennels", "world_1"):
        shutil.copytree(bench_dir / "spider" / "database" / name, tmp_path / name)
    result = runner.invoke(app, ["bench", "fk-recovery", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["databases"] == 3 and doc["declared_edges"] == 11
    assert doc["true_positives"] + doc["false_negatives"] == doc["declared_edges"]
    assert doc["pooled"]["precision"] >= 0.9 and doc["pooled"]["recall"] >= 0.9


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == "0.1.0"


def test_demo_command(schemawise_home: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["demo", "--json", "--out", str(tmp_path), "--no-recruiting"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    example = doc["fanout_example"]
    assert example["fixed_units"] == example["true_units"]
    assert [p["type"] for p in example["check"]] == ["fanout_risk"]
    assert example["naive_units"]["S"] > 2 * example["true_units"]["S"]
    assert (tmp_path / "dbt" / "models" / "schema.yml").is_file()
    lines = (tmp_path / "query_log.jsonl").read_text().splitlines()
    assert len(lines) == 300 and set(json.loads(lines[0])) == {"user", "timestamp", "sql"}


def _index_state(url: str) -> dict[str, object]:
    """Row counts of every schemawise table, and the server's databases."""
    import psycopg

    with psycopg.connect(url) as conn:
        tables = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'schemawise' ORDER BY 1"
        ).fetchall()
        state: dict[str, object] = {
            t: conn.execute(f'SELECT count(*) FROM schemawise."{t}"').fetchone() for (t,) in tables
        }
        state["databases"] = conn.execute("SELECT datname FROM pg_database ORDER BY 1").fetchall()
    return state


def test_linking_bench_runs_the_pipeline(bench_dir: Path, schemawise_home: Path) -> None:
    from schemawise.api import index
    from schemawise.db.embedded import ensure_started

    url = ensure_started()
    # The user's own index holds a source, so that "left as it was" has something to compare.
    index(f"sqlite:///{bench_dir / 'chinook' / 'chinook.sqlite'}", name="mine")
    before = _index_state(url)
    assert before.get("index_documents", (0,))[0] > 0  # type: ignore[index]
    result = runner.invoke(
        app,
        ["bench", "linking", "--dataset", "spider", "--data", str(bench_dir / "spider"),
         "--limit", "40", "--items", str(schemawise_home / "items.jsonl"), "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    items = [
        json.loads(line) for line in (schemawise_home / "items.jsonl").read_text().splitlines()
    ]
    asked = [i for i in items if i["set"] == "benchmark"]
    assert len(asked) == 40
    # Each pack's columns beside the gold ones, for studying column rules offline.
    for item in asked:
        columns = item["columns"]
        kept = {(t.lower(), c.lower()) for t, c, _, _ in columns["kept"]}
        assert {tuple(k) for k in columns["keys"]} <= kept
        assert columns["database_columns"] >= len(kept)
    assert sum(bool(item["columns"]["gold"]) for item in asked) >= 30  # `count(*)` has none
    assert sum(item["strict_table"] for item in asked) >= 30
    assert doc["questions"] == 40 and doc["databases"] >= 1
    ours = doc["schemawise"]
    assert 0.0 <= ours["strict_table_recall"] <= 1.0
    assert ours["tables_kept_mean"] >= 1.0 and ours["right_database"] == 1.0
    assert 0.0 < ours["gold_column_share_mean"] <= 1.0
    # Keys of the kept tables come on top of the gold columns (every database is given here).
    assert ours["gold_column_share_mean"] < ours["keys_and_gold_share_mean"] <= 1.0
    assert 0.0 < ours["column_share_pooled"] <= 1.0
    assert set(doc["baselines_strict_table_recall"]) == {"bm25", "dense", "fused"}
    assert _index_state(url) == before  # the benchmark left the user's index as it found it


def test_linking_bench_can_have_a_model_describe_the_tables_first(
    bench_dir: Path, schemawise_home: Path
) -> None:
    from schemawise.bench import linking

    asked: list[str] = []

    def describe(prompt: str) -> str:  # a scripted model: every table is a "gig"
        asked.append(prompt.splitlines()[0].removeprefix("Table: "))
        return json.dumps({"description": "a live show", "synonyms": ["gig"]})

    items = schemawise_home / "described.jsonl"
    doc = linking.run("spider", bench_dir / "spider", limit=4, baselines=False,
                      describe=describe, items=items)  # fmt: skip
    assert doc["described"] is True and doc["questions"] == 4
    assert sorted(asked) == ["concert", "singer", "singer_in_concert", "stadium"]
    # The replies are kept: a second run asks nothing, and gets the same packs.
    again = linking.run("spider", bench_dir / "spider", limit=4, baselines=False,
                        describe=describe)  # fmt: skip
    assert len(asked) == 4
    timeless = [{k: v for k, v in d["schemawise"].items() if k != "latency_seconds"}
                for d in (doc, again)]  # fmt: skip
    assert timeless[0] == timeless[1]
    # What the model said joins the table's metadata and its card text, beside what the
    # dataset already said about it.
    from schemawise.graph.model import Column, SchemaGraph, Table

    graph = SchemaGraph(tables=[Table(name="gigs", columns=[Column(name="id", type="INT")])])
    database = linking.BenchDatabase(graph, about={"gigs": "from the dataset's notes"})
    linking.described("scripted/gigs", database, describe, lambda _: None)
    meta = database.meta.table_meta("gigs")
    assert meta is not None and meta.synonyms == ["gig"]
    assert database.about["gigs"].startswith("from the dataset's notes")
    assert "also called gig" in database.about["gigs"]


def test_linking_bench_asks_reworded_questions(
    bench_dir: Path, schemawise_home: Path, tmp_path: Path
) -> None:
    dev = json.loads((bench_dir / "spider" / "dev.json").read_text())
    reworded = tmp_path / "reworded.jsonl"
    reworded.write_text(
        json.dumps({"number": 0, "question": "How many vocalists do we have?"}) + "\n"
        + json.dumps({"number": 7, "question": dev[7]["question"].upper()}) + "\n"
    )  # fmt: skip
    result = runner.invoke(
        app,
        ["bench", "linking", "--dataset", "spider", "--data", str(bench_dir / "spider"),
         "--reworded", str(reworded), "--no-baselines", "--limit", "1", "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["questions"] == 1 and doc["reworded"] == str(reworded)
    # Every database of the dataset is indexed, whatever few questions are asked.
    assert doc["databases"] == len({item["db_id"] for item in dev})
    # A file that is not rewordings of this dataset is an error with a hint, not a traceback.
    for text, said in [('{"number": 99999, "question": "x"}\n', "outside the dataset"),
                       ("not json\n", "is not a reworded question")]:  # fmt: skip
        reworded.write_text(text)
        refused = runner.invoke(
            app,
            ["bench", "linking", "--dataset", "spider", "--data", str(bench_dir / "spider"),
             "--reworded", str(reworded)],
        )  # fmt: skip
        assert refused.exit_code == 2 and said in " ".join(refused.output.split())


def test_linking_bench_measures_a_golden_set_of_your_own(
    bench_dir: Path, schemawise_home: Path, tmp_path: Path
) -> None:
    chinook = bench_dir / "chinook" / "chinook.sqlite"
    golden = tmp_path / "mine.yaml"
    golden.write_text(
        "items:\n"
        "- id: artists\n  question: how many artists are there?\n"
        "  gold: SELECT count(*) FROM Artist\n"
        "- id: sold\n  question: which media type sells best\n"
        "  tables: [InvoiceLine, Track, MediaType]\n  gold: SELECT 1\n"
        "- id: broken\n  question: how many moons?\n  gold: SELECT count(*) FROM Moons\n"
    )
    result = runner.invoke(
        app,
        ["bench", "linking", "--dataset", "golden", "--golden", str(golden),
         "--data", f"sqlite:///{chinook}", "--no-baselines",
         "--items", str(tmp_path / "items.jsonl"), "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    # An item whose gold query names no table of the database is left out, and named.
    ((skipped),) = doc["skipped_items"]
    assert doc["questions"] == 2 and skipped["id"] == "broken"
    assert "does not resolve" in skipped["reason"]
    assert doc["databases"] == 1 and doc["golden"] == str(golden)
    items = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text().splitlines()]
    asked = {i["id"]: i for i in items if i["set"] == "benchmark"}
    assert set(asked) == {"artists", "sold"}
    assert asked["artists"]["strict_table"] and asked["artists"]["right_database"]
    assert "Artist" in asked["artists"]["tables"]
    # Stated tables are the gold, whatever the gold query reads; a missed one is named.
    sold = asked["sold"]
    assert sold["strict_table"] == (sold["missed"] == [])
    assert set(sold["missed"]) <= {"invoiceline", "track", "mediatype"}
    # Each missed table with its cause: a candidate the rerank left out, not an unmatched one.
    assert set(sold["missed_why"]) == set(sold["missed"])
    assert set(sold["missed_why"].values()) <= {"cut", "wordless", "full"}
    assert doc["missed_tables_by_cause"] == dict(Counter(sold["missed_why"].values()))
    # Columns are scored where the tables come from the gold query, not where they are stated.
    assert "columns" not in sold and asked["artists"]["columns"]["tables"]
    # A stated table or column the database lacks is an error with a hint, not a miss of every
    # pack.
    for stated, said in [("tables: [Invoices]", "does not have: invoices"),
                         ("columns: [Track.Nmae]", "does not have: track.nmae")]:  # fmt: skip
        golden.write_text(f"items:\n- question: q\n  {stated}\n  gold: SELECT 1\n")
        refused = runner.invoke(
            app,
            ["bench", "linking", "--dataset", "golden", "--golden", str(golden),
             "--data", str(chinook), "--no-baselines"],
        )  # fmt: skip
        assert refused.exit_code != 0 and said in " ".join(refused.output.split())
    # Stated columns give the tables when none are stated.
    golden.write_text(
        f"items:\n- question: longest track\n  columns: [Track.Milliseconds]\n  gold: SELECT 1\n"
        f"- question: how many artists?\n  database: sqlite:///{chinook}\n"
        "  gold: SELECT count(*) FROM Artist\n"
    )
    both = runner.invoke(app, ["bench", "linking", "--dataset", "golden", "--golden", str(golden),
                               "--data", str(chinook), "--union", "--no-baselines",
                               "--json"])  # fmt: skip
    doc = json.loads(both.stdout)
    # The same file written two ways is one database (pooled, a second copy would split votes).
    assert doc["questions"] == 2 and doc["databases"] == 1 and doc["skipped_items"] == []
    assert doc["schemawise"]["right_database"] == 1.0
    # A golden file belongs to --dataset golden.
    wrong = runner.invoke(app, ["bench", "linking", "--dataset", "spider", "--data",
                                str(bench_dir / "spider"), "--golden", str(golden)])  # fmt: skip
    assert wrong.exit_code != 0 and "--dataset golden" in " ".join(wrong.output.split())
    # No golden file, or a shared dataset without its folder: told what to give.
    for args, hint in [(["--dataset", "golden"], "--golden"),
                       (["--dataset", "spider"], "--data")]:  # fmt: skip
        missing = runner.invoke(app, ["bench", "linking", *args, "--no-baselines"])
        assert missing.exit_code != 0 and hint in " ".join(missing.output.split())


def test_a_pack_names_the_tables_it_passed_over_and_why(
    bench_dir: Path, schemawise_home: Path
) -> None:
    from schemawise.api import index

    index(f"sqlite:///{bench_dir / 'chinook' / 'chinook.sqlite'}", name="music")
    result = runner.invoke(app, ["context", "tracks never purchased", "--json"])
    assert result.exit_code == 0, result.output
    pack = json.loads(result.stdout)
    chosen = {t["name"] for t in pack["tables"]}
    passed = pack["passed_over"]
    assert 0 < len(passed) <= 5 and not chosen & {t["name"] for t in passed}
    for table in passed:
        assert table["left_out"] in {"cut", "full", "wordless", "unweighed"}
        # Why first, with its share of the first table's score; then what matched it.
        assert "first table's score" in table["reasons"][0] or table["left_out"] == "unweighed"
    # Said beside the pack in the terminal too, the nearest misses first.
    said = runner.invoke(app, ["context", "tracks never purchased"])
    assert f"passed over: {passed[0]['name']} (" in " ".join(said.output.split())
    # The pack's text does not carry them: only what the model is to read.
    assert not any(f"CREATE TABLE {t['name']} " in pack["text"] for t in passed)


def test_a_golden_set_is_measured_with_the_team_s_overlay(
    bench_dir: Path, schemawise_home: Path, tmp_path: Path
) -> None:
    golden = tmp_path / "mine.yaml"
    golden.write_text(
        f"database: {bench_dir / 'chinook' / 'chinook.sqlite'}\nitems:\n"
        "- id: never\n  question: tracks never purchased\n"
        "  tables: [InvoiceLine, Track]\n  gold: SELECT 1\n"
    )
    overlay = tmp_path / "schemawise.yml"
    overlay.write_text("tables:\n  InvoiceLine:\n    synonyms: [purchase, sale]\n")

    def measured(*extra: str) -> dict[str, Any]:
        result = runner.invoke(
            app,
            ["bench", "linking", "--dataset", "golden", "--golden", str(golden),
             "--no-baselines", "--items", str(tmp_path / "items.jsonl"), "--json", *extra],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        lines = (tmp_path / "items.jsonl").read_text().splitlines()
        (item,) = [i for i in map(json.loads, lines) if i["set"] == "benchmark"]
        return item

    # "Purchased" names nothing in Chinook; the team's word for InvoiceLine does.
    assert measured()["missed"] == ["invoiceline"]
    assert measured("--overlay", str(overlay))["strict_table"]
    # Team files belong to a set of the team's own.
    refused = runner.invoke(
        app,
        ["bench", "linking", "--dataset", "spider", "--data", str(bench_dir / "spider"),
         "--overlay", str(overlay)],
    )  # fmt: skip
    assert refused.exit_code != 0 and "--dataset golden" in " ".join(refused.output.split())


def test_context_says_which_databases_an_unanswered_question_came_nearest_to(
    bench_dir: Path, schemawise_home: Path
) -> None:
    from schemawise.api import index

    index(f"sqlite:///{bench_dir / 'chinook' / 'chinook.sqlite'}", name="music")
    singers = bench_dir / "spider" / "database" / "concert_singer" / "concert_singer.sqlite"
    index(f"sqlite:///{singers}", name="singers")
    question = "recipe for a chocolate cake without eggs"
    result = runner.invoke(app, ["context", question, "--source", "music", "--source", "singers"])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "nothing found" in said and "nearest: " in said
    assert "music" in said and "singers" in said and "--no-relevance-floor" in said
    # Named as the source, with the floor off, the nearest one answers anyway.
    forced = runner.invoke(app, ["context", question, "--source", "music",
                                 "--no-relevance-floor", "--json"])  # fmt: skip
    assert forced.exit_code == 0 and json.loads(forced.stdout)["tables"]


def test_the_model_picks_among_pooled_databases_only() -> None:
    result = runner.invoke(app, ["bench", "linking", "--dataset", "spider", "--data", ".",
                                 "--model-picks-source"])  # fmt: skip
    assert result.exit_code == 2
    assert "--union" in result.output
