"""What every command group shares: the consoles and the error handler (a SchemawiseError
becomes a message, a hint and exit code 2, or JSON with --json)."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import typer

from schemawise.errors import SchemawiseError
from schemawise.terminal import assemble, plain

if TYPE_CHECKING:
    from rich.console import Console


class _ConsoleOnFirstUse:
    """A rich Console built when first used: importing rich costs start-up time that
    `--version`, `--help` and JSON output need not pay."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Console | None = None

    def console(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.console(), name)


def real_console(console: Console) -> Console:
    """The Console itself, for rich objects that take one (a Progress bar enters it)."""
    return console.console() if isinstance(console, _ConsoleOnFirstUse) else console


# Piped output is not wrapped at 80 columns: tables of long names stay readable in logs.
out = cast("Console", _ConsoleOnFirstUse(width=None if sys.stdout.isatty() else 160))
err = cast("Console", _ConsoleOnFirstUse(stderr=True))


def handle_errors[F: Callable[..., Any]](func: F) -> F:
    """Turn a SchemawiseError into a message, a hint and exit code 2 (JSON with --json)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except SchemawiseError as exc:
            if kwargs.get("as_json"):
                print(json.dumps({"error": exc.to_dict()}))
            else:
                err.print(assemble(("error: ", "bold red"), plain(exc.message)))
                if exc.hint:
                    err.print(assemble(("hint: ", "bold"), plain(exc.hint)))
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            err.print(
                "[bold yellow]interrupted:[/] schemawise writes in whole transactions, so "
                "nothing half-done was kept (`index` leaves the index as it was; `rows backfill` "
                "resumes where it stopped).",
                highlight=False,
            )
            raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]
