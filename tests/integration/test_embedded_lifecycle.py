"""The embedded server: start on demand, reuse, stop, and two starters at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg


def _cli(home: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "SCHEMAWISE_HOME": str(home)}
    return subprocess.Popen(
        [sys.executable, "-m", "schemawise", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _run(home: Path, *args: str) -> str:
    proc = _cli(home, *args)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return out


def test_concurrent_start_reuse_and_stop(tmp_path: Path) -> None:
    home = tmp_path / "home"
    try:
        # Two processes start the same server at once: both get the same URL.
        first, second = _cli(home, "db", "url"), _cli(home, "db", "url")
        outputs = [p.communicate(timeout=120) for p in (first, second)]
        assert first.returncode == 0 and second.returncode == 0, outputs
        urls = {out.strip() for out, _ in outputs}
        assert len(urls) == 1
        url = urls.pop()
        status = json.loads(_run(home, "db", "status", "--json"))
        assert status["running"] is True and status["url"] == url
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE TABLE kept (x int)")
            conn.execute("INSERT INTO kept VALUES (42)")
        assert _run(home, "db", "stop").strip() == "stopped"
        assert json.loads(_run(home, "db", "status", "--json"))["running"] is False
        assert _run(home, "db", "stop").strip() == "not running"
        # Started again on demand: the data directory is reused, the data is still there.
        url = _run(home, "db", "url").strip()
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT x FROM kept").fetchone() == (42,)
        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            version = row.fetchone()
            assert version is not None and version[0].startswith("0.8")
            assert conn.execute("SHOW server_version").fetchone()[0].startswith("17")  # type: ignore[index]
    finally:
        _cli(home, "db", "stop").communicate(timeout=120)
