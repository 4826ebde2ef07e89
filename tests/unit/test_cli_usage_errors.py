"""A command line that cannot be parsed: Click's text for people, and with --json the JSON
error every other error is (README: "with --json, the error is a JSON document")."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from schemawise.cli import app

runner = CliRunner()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["context", "orders", "--budget", "abc", "--json"], "Invalid value for '--budget'"),
        (["context", "--json"], "Missing argument 'QUESTION'"),
        (["context", "orders", "--json", "--no-such-option"], "No such option: --no-such-option"),
        (["sync", "--json", "--url"], "Option '--url' requires an argument"),
    ],
)
def test_with_json_a_usage_error_is_a_json_error(args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    error = json.loads(result.stdout)["error"]
    assert error["type"] == "UsageError" and message in error["message"]
    assert error["hint"].startswith("See `") and "--help" in error["hint"]


def test_without_json_a_usage_error_is_clicks_text() -> None:
    result = runner.invoke(app, ["context", "orders", "--budget", "abc"])
    assert result.exit_code == 2
    assert "Invalid value for '--budget'" in result.output
    with pytest.raises(json.JSONDecodeError):
        json.loads(result.stdout or "not json")


def test_with_json_a_command_that_runs_keeps_its_exit_code() -> None:
    # `--version` exits 0 without running a command; a command's own exit code passes through.
    assert runner.invoke(app, ["--version"]).exit_code == 0
    result = runner.invoke(app, ["path", "sqlite:///nowhere/at/all.sqlite", "a", "b", "--json"])
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["type"] != "UsageError"
