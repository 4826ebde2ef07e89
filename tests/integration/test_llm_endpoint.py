"""The assistant over real HTTP: the same code path as any OpenAI-compatible endpoint, first
against a scripted server (always), then against the configured model (only when
SCHEMAWISE_LLM is set: `SCHEMAWISE_LLM=local pytest tests/integration/test_llm_endpoint.py`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from schemawise.agent.assistant import AskOptions, Assistant
from schemawise.agent.llm import LLM, configured_spec, parse_spec
from schemawise.errors import ModelCallError
from tests.integration.openai_script import (
    ScriptedChat,
    first_number_answer,
    serving,
    sql_json,
)


def test_a_question_answered_through_an_openai_compatible_endpoint(
    embedded_url: str, demo_source: str, tmp_path: Path
) -> None:
    script = ScriptedChat({
        "write": lambda system, user: sql_json(
            "SELECT count(*) AS n FROM shop.customers" if "Schema:" in user else "nothing"
        ),
        "answer": first_number_answer,
        "rank": lambda system, user: '{"tables": [{"name": "shop.customers", "score": 9}]}',
    })  # fmt: skip
    with serving(script) as base_url:
        llm = LLM.from_spec(parse_spec(f"openai-compatible:scripted@{base_url}"))
        reply = Assistant(llm, index_url=embedded_url, failure_log=False).ask(
            "how many customers are there?", options=AskOptions(sources=[demo_source])
        )
    assert reply.status == "answered" and reply.answer == "The answer is 400."
    assert reply.usage["calls"] == 3 and reply.usage["input_tokens"] > 0
    # Not a local model: the model ranks the wide retrieval first (agent/rank.py).
    assert [c["stage"] for c in reply.usage["per_call"]] == ["rank", "write", "answer"]
    assert reply.context["tables"] == ["shop.customers"]
    first = script.requests[1]
    assert first["model"] == "scripted"
    # The reply cap in the field every OpenAI-compatible server reads (llama.cpp's ignores
    # `max_completion_tokens` and would generate to the end of its context).
    assert (
        first["max_tokens"]
        == LLM.from_spec(parse_spec("openai-compatible:x@http://h")).budget.max_reply_tokens
    )
    assert "max_completion_tokens" not in first
    assert first["messages"][0]["content"].startswith("You write one read-only PostgreSQL")


def test_an_endpoint_that_is_down_is_a_classified_error(
    embedded_url: str, demo_source: str
) -> None:
    llm = LLM.from_spec(parse_spec("openai-compatible:x@http://127.0.0.1:9/v1"))
    llm.budget.call_timeout = 5
    reply = Assistant(llm, index_url=embedded_url, failure_log=False).ask(
        "how many customers are there?", options=AskOptions(sources=[demo_source])
    )
    assert reply.status == "failed" and reply.failure is not None
    assert "could not be reached" in reply.failure.reason
    with pytest.raises(ModelCallError) as caught:
        llm.fresh().run("write", "x", "y")
    assert "endpoint is running" in caught.value.hint


@pytest.mark.skipif(not os.environ.get("SCHEMAWISE_LLM"), reason="SCHEMAWISE_LLM is not set")
def test_the_configured_model_answers_a_demo_question(embedded_url: str, demo_source: str) -> None:
    spec = configured_spec()
    assert spec is not None
    reply = Assistant(LLM.from_spec(spec), index_url=embedded_url, failure_log=False).ask(
        "how many customers are there?", options=AskOptions(sources=[demo_source])
    )
    assert reply.sql, reply.failure
    assert reply.status == "answered", reply.failure
    assert reply.result is not None and reply.result.rows[0][0] == 400
