"""The README's first session, replayed in a real terminal (bash in a pty, through pexpect)
with a fresh schemawise home, as a new user would type it: every line of the README's block is
run and its output read. The README cannot promise what the commands do not print."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

ROOT = Path(__file__).resolve().parents[2]
PROMPT = "QUICKSTART$ "


def readme_session() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"### A first session\n.*?```sh\n(.*?)```", readme, flags=re.S)
    assert block, "the README has no first-session block"
    return [line.split("  #")[0].strip() for line in block.group(1).splitlines() if line.strip()]


@pytest.fixture()
def terminal(tmp_path: Path) -> Iterator[pexpect.spawn]:
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "SCHEMAWISE_HOME": str(tmp_path / "home"), "PS1": PROMPT,
           "PATH": f"{bin_dir}:{os.environ['PATH']}", "COLUMNS": "160", "TERM": "dumb"}  # fmt: skip
    child = pexpect.spawn("bash", ["--norc", "--noprofile"], env=env, encoding="utf-8",
                          timeout=180, dimensions=(50, 160))  # fmt: skip
    child.expect_exact(PROMPT)
    yield child
    child.sendline("schemawise db stop; exit")  # the session's own embedded server
    child.expect(pexpect.EOF)
    child.close(force=True)


def typed(child: pexpect.spawn, line: str) -> tuple[str, int]:
    """What the line printed, and its exit code."""
    child.sendline(f'{line}; echo "[exit $?]"')
    child.expect(r"\[exit (\d+)\]")
    output, code = child.before, int(child.match.group(1))
    child.expect_exact(PROMPT)
    return output, code


def test_the_readme_first_session(terminal: pexpect.spawn) -> None:
    lines = readme_session()
    assert [line.split()[1] for line in lines] == [
        "demo",
        "index",
        "context",
        "check",
        "run",
        "run",
    ]
    demo, index, context, check, refused, ran = (typed(terminal, line) for line in lines)
    assert demo[1] == 0 and "the naive join is 2.67× too high" in demo[0]
    assert index[1] == 0 and re.search(r"indexed shop: \d+ tables, \d+ documents", index[0])
    assert context[1] == 0
    chosen = re.findall(r"^\s+(shop\.\w+) \d\.\d+:", context[0], flags=re.M)
    assert {"shop.sales_reps", "shop.customers", "shop.orders"} <= set(chosen)
    assert "CREATE TABLE shop.orders" in context[0]
    # A rep's customers are the customers naming the rep, not those of the rep's region.
    assert "-- join: shop.customers.rep_id = shop.sales_reps.rep_id" in context[0]
    joins = [line for line in context[0].splitlines() if line.startswith("-- join:")]
    assert sum("= shop.regions.region_id" in line for line in joins) <= 1  # no chasm there
    assert check[1] == 0 and "fanout_risk" in check[0] and "ok (with warnings)" in check[0]
    assert refused[1] == 1 and "fanout_risk" in refused[0]
    assert "Aggregate shop.shipments by" in refused[0]
    assert ran[1] == 0 and re.search(r"4 rows in \d+ ms", ran[0])
    assert "schema graph: the indexed one" in ran[0]  # `index` stored it: not read again
