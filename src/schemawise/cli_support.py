"""What every command group shares: the consoles and the error handlers (a SchemawiseError
becomes a message, a hint and exit code 2, or JSON with --json; so does a command line that
cannot be parsed, with --json)."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

import typer
from typer.core import TyperGroup

# The exceptions of the Click that Typer runs on: recent Typer carries its own copy of Click.
try:
    from typer._click.exceptions import Abort, ClickException, UsageError
except ImportError:  # a Typer that runs on the click package
    from click.exceptions import Abort, ClickException, UsageError  # type: ignore[assignment]

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


class JsonErrorsGroup(TyperGroup):
    """The command group that, when `--json` was asked for, reports a command line it cannot
    parse (an unknown option, `--budget abc`) as the JSON error every other error is, not as
    Click's text: a script reading stdout gets `{"error": {type, message, hint}}`, exit 2."""

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        argv = list(args) if args is not None else sys.argv[1:]
        if not standalone_mode or "--json" not in argv:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            done = super().main(args, prog_name, complete_var, False, **extra)
        except ClickException as exc:
            kind = "UsageError" if isinstance(exc, UsageError) else type(exc).__name__
            command = exc.ctx.command_path if isinstance(exc, UsageError) and exc.ctx else ""
            hint = f"See `{command} --help`." if command else "See `schemawise --help`."
            print(json.dumps({"error": {"type": kind, "message": exc.format_message(),
                                        "hint": hint}}))  # fmt: skip
            sys.exit(exc.exit_code)
        except Abort:
            err.print("Aborted!")
            sys.exit(1)
        # Without standalone mode Click returns the code a command exited with (typer.Exit),
        # or what the command returned: 0 then.
        sys.exit(done if isinstance(done, int) else 0)
