"""`schemawise chat` in a real terminal (a pty, through pexpect): two turns, the second a
follow-up built on the first turn's SQL, then /sql, /feedback, /source and /quit."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

import pexpect

from tests.integration.openai_script import ScriptedChat, first_number_answer, serving, sql_json

FIRST = "SELECT count(*) AS shipped FROM shop.orders WHERE status = 'S'"
SECOND = (
    "SELECT date_trunc('month', ordered_at) AS month, count(*) AS shipped FROM shop.orders "
    "WHERE status = 'S' GROUP BY 1 ORDER BY 1"
)


def _write(system: str, user: str) -> str:
    # The follow-up is answerable only if the first turn's SQL came with it.
    if "split it by month" in user:
        return sql_json(SECOND if FIRST in user else "SELECT no_history")
    return sql_json(FIRST)


def test_two_turns_and_a_follow_up(
    embedded_url: str, demo_source: str, schemawise_home: Path
) -> None:
    ranked = '{"tables": [{"name": "shop.orders", "score": 9}]}'
    script = ScriptedChat(
        {"write": _write, "answer": first_number_answer, "rank": lambda s, u: ranked}
    )
    with serving(script) as base_url:
        env = {**os.environ, "SCHEMAWISE_HOME": str(schemawise_home), "NO_COLOR": "1",
               "TERM": "dumb", "COLUMNS": "120",
               "SCHEMAWISE_LLM": f"openai-compatible:scripted@{base_url}"}  # fmt: skip
        child = pexpect.spawn(sys.executable, ["-m", "schemawise", "chat", "--source", demo_source],
                              env=env, encoding="utf-8", timeout=90)  # fmt: skip
        try:
            child.expect("you> ")
            child.sendline("how many shipped orders?")
            child.expect(r"answer: The answer is (\d+)\.")
            shipped = int(child.match.group(1))
            child.expect("you> ")
            child.sendline("now split it by month")
            child.expect(r"answer: The answer is \d+\.")
            child.expect("you> ")
            child.sendline("/sql")
            child.expect("date_trunc")
            child.expect("you> ")
            child.sendline("/feedback months should be calendar months")
            child.expect("kept with the last answer")
            child.expect("you> ")
            # The database of the following turns: an unknown name is refused with the list.
            child.sendline("/source nowhere")
            child.expect(f"no source named nowhere; indexed: .*{demo_source}")
            child.expect("you> ")
            child.sendline(f"/source {demo_source}")
            child.expect(f"questions now go to {demo_source} \\(a new conversation\\)")
            child.expect("you> ")
            child.sendline("/quit")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
    assert child.exitstatus == 0
    assert shipped > 0
    writes = [r for r in script.requests if "You write one" in str(r["messages"][0]["content"])]
    assert len(writes) == 2 and FIRST in str(writes[1]["messages"])
    with sqlite3.connect(schemawise_home / "conversations.sqlite") as conn:
        kept = conn.execute("SELECT sql, feedback FROM turns ORDER BY at DESC LIMIT 1").fetchone()
    assert kept == (SECOND, "months should be calendar months")
