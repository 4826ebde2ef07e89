"""Shared fixtures: one embedded PostgreSQL per test session, in a private folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"
BENCH = SHARED / "bench"


@pytest.fixture(scope="session")
def schemawise_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A private SCHEMAWISE_HOME, so tests never touch a developer's own database."""
    home = tmp_path_factory.mktemp("swhome")
    previous = os.environ.get("SCHEMAWISE_HOME")
    os.environ["SCHEMAWISE_HOME"] = str(home)
    yield home
    from schemawise.db import embedded

    embedded.stop()
    if previous is None:
        os.environ.pop("SCHEMAWISE_HOME", None)
    else:
        os.environ["SCHEMAWISE_HOME"] = previous


@pytest.fixture(scope="session")
def embedded_url(schemawise_home: Path) -> str:
    from schemawise.db.embedded import ensure_started

    return ensure_started()


@pytest.fixture(scope="session")
def bench_dir() -> Path:
    if not BENCH.is_dir():
        pytest.skip(f"benchmark data not found at {BENCH}")
    return BENCH
