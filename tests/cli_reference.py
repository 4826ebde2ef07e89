"""docs/cli.md: every command's `--help`, as the code prints it.

`make docs` writes the file; tests/unit/test_docs.py fails when the file and the code's help
differ, so the reference cannot drift from the commands (datasette keeps its CLI reference the
same way)."""

from __future__ import annotations

from typing import Any

import typer.main
from typer.testing import CliRunner

from schemawise.cli import app

HEADER = """# Command-line reference

Every command's `--help`, generated from the code by `make docs` (a test fails when this file
and the commands disagree). The README's [Commands](../README.md#commands) table says the same
in one line each; this is the whole text.
"""


def command_paths(group: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and group, in the order `--help` lists them (typer's own click groups:
    anything with `commands`)."""
    paths = []
    for name, command in group.commands.items():
        path = (*prefix, name)
        paths.append(path)
        if hasattr(command, "commands"):
            paths += command_paths(command, path)
    return paths


def help_text(path: tuple[str, ...]) -> str:
    # A fixed width, so the reference is the same on every terminal and machine.
    result = CliRunner().invoke(
        app, [*path, "--help"], env={"COLUMNS": "80"}, prog_name="schemawise"
    )
    assert result.exit_code == 0, result.output
    return result.stdout.rstrip() + "\n"


def reference() -> str:
    root = typer.main.get_command(app)
    parts = [HEADER, "## schemawise\n", "```text", help_text(()).rstrip(), "```\n"]
    for path in command_paths(root):
        parts += [f"## schemawise {' '.join(path)}\n", "```text", help_text(path).rstrip(), "```\n"]
    return "\n".join(parts)


if __name__ == "__main__":
    print(reference(), end="")
