"""`schemawise eval` driving the assistant through an OpenAI-compatible endpoint (a scripted
one): the same path `make eval-llm` takes with the local model, scored, attributed, and
resumed from the kept predictions without asking the model again."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemawise.cli import app
from tests.integration.openai_script import ScriptedChat, serving, sql_json

SCHEMA = """
CREATE TABLE teams (team_id INTEGER PRIMARY KEY, team_name TEXT, league TEXT);
CREATE TABLE players (player_id INTEGER PRIMARY KEY, team_id INTEGER REFERENCES teams,
                      player_name TEXT, goals INTEGER);
INSERT INTO teams VALUES (1, 'Rovers', 'North'), (2, 'United', 'South');
INSERT INTO players VALUES (1, 1, 'Ada', 3), (2, 2, 'Bo', 5), (3, 1, 'Cy', 1);
"""


def _write(system: str, user: str) -> str:
    if "How many goals" in user:  # right
        return sql_json("SELECT sum(goals) FROM players")
    return sql_json("SELECT player_name FROM players WHERE goals > 4")  # wrong value: 2 wanted


GOALS = (
    "  - {id: goals, question: 'How many goals were scored?', "
    "gold: SELECT sum(goals) FROM players}\n"
)
SCORERS = (
    "  - {id: scorers, question: 'Who scored more than two goals?', "
    "gold: SELECT player_name FROM players WHERE goals > 2}\n"
)


def _league(folder: Path, *items: str) -> Path:
    """The league database and a golden file over it holding `items` (YAML lines)."""
    db = folder / "league.sqlite"
    if not db.exists():
        with sqlite3.connect(db) as conn:
            conn.executescript(SCHEMA)
    golden = folder / "golden.yaml"
    golden.write_text(f"database: {db}\nitems:\n" + "".join(items))
    return golden


@pytest.mark.slow
def test_eval_scores_and_resumes(
    embedded_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    golden = _league(tmp_path, GOALS, SCORERS)
    script = ScriptedChat({"write": _write})
    with serving(script) as base_url:
        args = ["eval", "--dataset", "golden", "--golden", str(golden), "--json",
                "--llm", f"openai-compatible:scripted@{base_url}"]  # fmt: skip
        first = CliRunner().invoke(app, args)
        assert first.exit_code == 0, first.output
        asked = len(script.requests)
        again = CliRunner().invoke(app, args)
    report = json.loads(first.output)
    assert report["metrics"]["execution_accuracy"] == 0.5
    assert report["metrics"]["strict_table_recall"] == 1.0
    by_id = {i["id"]: i for i in report["items"]}
    assert by_id["goals"]["correct"] and not by_id["scorers"]["correct"]
    assert by_id["scorers"]["attribution"] == "wrong_value"
    assert by_id["goals"]["stages"]["model_calls"] >= 1
    assert report["cost"]
    assert asked >= 2 and len(script.requests) == asked  # the second run asked nothing
    assert json.loads(again.output)["metrics"] == report["metrics"]


@pytest.mark.slow
def test_eval_can_index_with_the_models_table_descriptions(
    embedded_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from schemawise.api import sources
    from schemawise.eval.assistant import eval_index_url

    golden = _league(tmp_path, GOALS)
    said = json.dumps({"description": "one footballer", "synonyms": ["footballer"]})
    script = ScriptedChat({"write": _write, "describe": lambda system, user: said})
    with serving(script) as base_url:
        args = ["eval", "--dataset", "golden", "--golden", str(golden), "--json",
                "--llm", f"openai-compatible:scripted@{base_url}"]  # fmt: skip
        first = CliRunner().invoke(app, [*args, "--describe"])
        assert first.exit_code == 0, first.output
        described = [r for r in script.requests if "You help people find" in str(r)]
        assert len(described) == 2  # teams and players, one call each
        options = {s["source"]: s["options"] for s in sources(index_url=eval_index_url())}
        assert any(o.get("describe") for o in options.values()), options
        # Without --describe the same source is indexed again, plainly, and the question is
        # asked again: a described run's answers are kept apart.
        writes = sum("You write one" in str(r) for r in script.requests)
        plain = CliRunner().invoke(app, args)
        assert sum("You write one" in str(r) for r in script.requests) > writes
        assert plain.exit_code == 0, plain.output
        options = {s["source"]: s["options"] for s in sources(index_url=eval_index_url())}
        assert not any(o.get("describe") for o in options.values()), options
    assert json.loads(first.output)["metrics"]["execution_accuracy"] == 1.0


@pytest.mark.slow
def test_eval_stops_when_nothing_answers_and_keeps_no_failure(
    embedded_url: str, tmp_path: Path
) -> None:
    """A model that is down is not 200 wrong answers: the run stops with the reason, and no
    question is kept as failed, so the same command resumes once the model is back."""
    from schemawise.config import home_dir

    golden = _league(tmp_path, GOALS)
    args = ["eval", "--dataset", "golden", "--golden", str(golden), "--json",
            "--llm", "openai-compatible:down@http://127.0.0.1:9/v1"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    error = json.loads(result.output)["error"]
    assert error["type"] == "ModelUnreachableError"
    assert error["message"].startswith("Evaluation stopped at goals")
    assert "run the same command" in error["hint"]
    kept = [line for f in (home_dir() / "eval").glob("predictions-*.jsonl")
            for line in f.read_text().splitlines() if '"id": "goals"' in line
            and "model_error" in line]  # fmt: skip
    assert kept == []


@pytest.mark.slow
def test_kept_only_scores_what_was_answered_without_a_model(
    embedded_url: str, tmp_path: Path
) -> None:
    """An interrupted long run can be scored as it stands: the kept answers only, the model
    not asked (here its endpoint is gone by then)."""
    golden = _league(tmp_path, GOALS)
    script = ScriptedChat({"write": _write})
    with serving(script) as base_url:
        args = ["eval", "--dataset", "golden", "--golden", str(golden), "--json",
                "--llm", f"openai-compatible:scripted@{base_url}"]  # fmt: skip
        assert CliRunner().invoke(app, args).exit_code == 0
    _league(tmp_path, GOALS, "  - {id: teams, question: 'How many teams?', gold: SELECT 2}\n")
    result = CliRunner().invoke(app, [*args, "--kept-only"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert [i["id"] for i in report["items"]] == ["goals"]
    assert report["items"][0]["correct"] is True
    assert report["sampled"]["chosen"] == 2 and report["sampled"]["scored"] == 1
    assert any("--kept-only" in note for note in report["notes"])
    refused = CliRunner().invoke(app, [*args, "--kept-only", "--fresh"])
    assert refused.exit_code == 2 and "--kept-only" in refused.output
