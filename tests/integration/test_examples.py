"""The runnable examples run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_join_path_example(bench_dir: Path) -> None:
    chinook = bench_dir / "chinook" / "chinook.sqlite"
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "join_path.py"), str(chinook), "Artist", "Genre"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "11 tables" in result.stdout
    assert "JOIN Track.GenreId = Genre.GenreId" in result.stdout
    assert "grain: one row per Track row" in result.stdout


def test_context_pack_example(bench_dir: Path, schemawise_home: Path) -> None:
    chinook = bench_dir / "chinook" / "chinook.sqlite"
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "context_pack.py"), str(chinook),
         "total invoice revenue per music genre"],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    assert "indexed 11 tables" in result.stdout
    assert "CREATE TABLE Genre" in result.stdout and "CREATE TABLE InvoiceLine" in result.stdout
    assert "-- join: " in result.stdout and "tokens)" in result.stdout


def test_follow_ups_example(bench_dir: Path, schemawise_home: Path) -> None:
    # The command behind the follow-up figures in docs/benchmarks.md ("Follow-up turns").
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "follow_ups.py"),
         str(ROOT / "tests" / "fixtures" / "context" / "follow_ups_spider.yaml"),
         str(bench_dir / "spider" / "database")],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    assert "with the questions it follows: 10/10 follow-ups" in result.stdout
    assert "on its own: 7/10 follow-ups" in result.stdout
