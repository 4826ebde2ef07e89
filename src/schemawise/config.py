"""Settings from the environment (SCHEMAWISE_*): where schemawise keeps its files."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def home_dir() -> Path:
    """The folder for schemawise's own files (embedded database, demo artefacts).

    SCHEMAWISE_HOME wins so that tests, CI and several checkouts never share one database.
    """
    override = os.environ.get("SCHEMAWISE_HOME")
    path = Path(override) if override else Path(platformdirs.user_data_dir("schemawise"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def embedded_data_dir() -> Path:
    return home_dir() / "pgdata"


def demo_dir() -> Path:
    path = home_dir() / "demo"
    path.mkdir(parents=True, exist_ok=True)
    return path
