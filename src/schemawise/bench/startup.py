"""Start-up time of the command line: how long `schemawise --version`, `--help` and a
command's `--help` take from exec to exit, beside a bare `python -c pass` (the floor no
command can go below). Each is run `runs` times in a fresh process, after one warm-up run that
also writes the bytecode cache; wall-clock seconds."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from schemawise.bench.timing import percentiles

CASES: dict[str, Sequence[str]] = {
    "schemawise --version": ["--version"],
    "schemawise --help": ["--help"],
    "schemawise check --help": ["check", "--help"],
    "schemawise context --help": ["context", "--help"],
}


def _time(command: Sequence[str]) -> float:
    # Bytecode is written and reused, as after `pip install` (an environment that sets
    # PYTHONDONTWRITEBYTECODE would otherwise compile every module on every start).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    began = time.perf_counter()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)  # fmt: skip
    return time.perf_counter() - began


def run(runs: int = 20, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    say = progress or (lambda _: None)
    # The installed console script, as a user runs it (not `python -m`, which imports more).
    script = Path(sys.executable).with_name("schemawise")
    cases = {"python -c pass": [sys.executable, "-c", "pass"]}
    cases |= {name: [str(script), *args] for name, args in CASES.items()}
    seconds: dict[str, Any] = {}
    for name, command in cases.items():
        say(name)
        _time(command)  # warm the file cache: the figures are for a warm start
        seconds[name] = percentiles([_time(command) for _ in range(runs)])
    return {"benchmark": "startup", "runs": runs, "python": sys.version.split()[0],
            "seconds": seconds}  # fmt: skip
