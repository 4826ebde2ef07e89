"""Docs match the code: every command is in the README, every contract field in docs/json.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import BaseModel

from schemawise.agent.assistant import Failure, Reply, ResultShape
from schemawise.cli import app
from schemawise.graph.model import Column, Edge, Evidence, Problem, SchemaGraph, Table
from schemawise.graph.paths import JoinPath, PathEdge
from schemawise.retrieve.pack import (
    ColumnChoice,
    ContextPack,
    DroppedPart,
    SourceScore,
    TableChoice,
)
from schemawise.retrieve.relevance import Relevance
from schemawise.validate.check import CheckResult
from schemawise.validate.problems import SqlProblem
from tests.contracts import section_fields

ROOT = Path(__file__).resolve().parents[2]


def _commands() -> list[str]:
    found = []
    for command in app.registered_commands:
        found.append(command.name or command.callback.__name__)  # type: ignore[union-attr]
    for group in app.registered_groups:
        for command in group.typer_instance.registered_commands:  # type: ignore[union-attr]
            found.append(f"{group.name} {command.name}")
    return found


@pytest.mark.parametrize("command", _commands())
def test_every_command_is_in_the_readme(command: str) -> None:
    assert f"schemawise {command}" in (ROOT / "README.md").read_text()


@pytest.mark.parametrize(
    "model",
    [
        SchemaGraph,
        Table,
        Column,
        Edge,
        Evidence,
        Problem,
        JoinPath,
        PathEdge,
        CheckResult,
        SqlProblem,
        ContextPack,
        TableChoice,
        ColumnChoice,
        DroppedPart,
        Relevance,
        SourceScore,
        Reply,
    ],
)
def test_every_contract_field_is_documented_in_its_models_section(model: type[BaseModel]) -> None:
    documented = section_fields(model.__name__)
    missing = set(model.model_fields) - documented
    assert not missing, (
        f"{model.__name__} fields missing from its section of docs/json.md: {missing}"
    )
    stale = documented - set(model.model_fields)
    assert not stale, f"docs/json.md's {model.__name__} section lists fields it lacks: {stale}"


def test_readme_quick_start_is_two_make_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "make demo" in readme and "make test" in readme
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_every_problem_type_is_documented() -> None:
    from schemawise.validate.errors import HINTS

    sources = "".join(p.read_text() for p in (ROOT / "src/schemawise/validate").glob("*.py"))
    from schemawise.db import guard

    guard_kinds = {guard.TIMEOUT, guard.CANCELLED, guard.CONNECTION_LOST, guard.RESOURCE_LIMIT}
    kinds = set(re.findall(r'SqlProblem\.of\(\s*"(\w+)"', sources)) | set(HINTS) | guard_kinds
    doc = (ROOT / "docs" / "json.md").read_text()
    missing = {k for k in kinds if f"`{k}`" not in doc}
    assert not missing, f"problem types missing from docs/json.md: {missing}"


@pytest.mark.parametrize(("model", "row"), [(Failure, "failure"), (ResultShape, "result")])
def test_nested_reply_objects_are_documented_in_their_row(model: type[BaseModel], row: str) -> None:
    doc = (ROOT / "docs" / "json.md").read_text()
    lines = [x for x in doc.splitlines() if x.startswith(f"| `{row}` |") and "{" in x]
    reply_row = lines[-1]  # Reply is documented after Run, which has a `result` row too
    missing = {f for f in model.model_fields if f not in reply_row}
    assert not missing, f"{model.__name__} fields missing from the `{row}` row: {missing}"


def test_the_cli_reference_is_the_help_the_commands_print() -> None:
    from tests.cli_reference import reference

    written = (ROOT / "docs" / "cli.md").read_text()
    assert written == reference(), "docs/cli.md is out of date: run `make docs`"


@pytest.mark.parametrize("placeholder", ["<bool>", "<str>", "<list[", "<int>", "<path>"])
def test_help_shows_no_type_placeholders(placeholder: str) -> None:
    assert placeholder not in (ROOT / "docs" / "cli.md").read_text()


def test_every_command_help_ends_with_an_example() -> None:
    import typer.main

    from tests.cli_reference import command_paths, help_text

    root = typer.main.get_command(app)
    leaves = [p for p in command_paths(root) if not hasattr(root.commands[p[0]], "commands")
              or len(p) > 1]  # fmt: skip
    missing = [" ".join(p) for p in leaves if "Example" not in help_text(p)]
    assert not missing, f"commands without an example in --help: {missing}"


def test_every_error_class_is_documented() -> None:
    import inspect

    from schemawise import errors

    classes = [name for name, value in inspect.getmembers(errors, inspect.isclass)
               if issubclass(value, errors.SchemawiseError)]  # fmt: skip
    section = (ROOT / "docs" / "json.md").read_text().split("## Errors", 1)[1].split("\n## ")[0]
    assert len(classes) >= 10
    assert [c for c in classes if f"`{c}`" not in section] == []
