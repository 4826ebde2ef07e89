"""The assistant's pure parts: reading a reply, the number check, model settings, grammar
routing and the ranker's reranking."""

from __future__ import annotations

from pathlib import Path

import pytest

from schemawise.agent.answer import template_answer, unsupported_numbers
from schemawise.agent.draft import UnreadableReplyError, read_draft
from schemawise.agent.llm import configured_spec, parse_spec
from schemawise.agent.rank import read_scores, rerank
from schemawise.agent.router import route, route_by_grammar
from schemawise.errors import ModelNotConfiguredError
from schemawise.rank.structural import Candidate


@pytest.mark.parametrize(
    ("reply", "query"),
    [
        ('{"query": "SELECT 1", "assumptions": ["x"]}', "SELECT 1"),
        ('Sure! {"sql": "SELECT a FROM t;"} Hope it helps', "SELECT a FROM t"),
        ('```json\n{"query": "SELECT 2"}\n```', "SELECT 2"),
        ("```sql\nSELECT b FROM t\n```", "SELECT b FROM t"),
        ("SELECT c FROM t;", "SELECT c FROM t"),
        ("WITH x AS (SELECT 1) SELECT * FROM x", "WITH x AS (SELECT 1) SELECT * FROM x"),
        ('{"note": 1} then {"query": "SELECT 3"}', "SELECT 3"),
    ],
)
def test_a_reply_is_read_in_every_form_a_model_sends(reply: str, query: str) -> None:
    assert read_draft(reply).query == query


@pytest.mark.parametrize("reply", ["", "I cannot help with that.", '{"query": ""}', "{broken"])
def test_a_reply_without_sql_says_what_to_send(reply: str) -> None:
    with pytest.raises(UnreadableReplyError, match="one JSON object"):
        read_draft(reply)


def test_assumptions_and_tables_are_kept_as_lists() -> None:
    draft = read_draft('{"query": "SELECT 1", "assumptions": "one", "tables": ["t", ""]}')
    assert draft.assumptions == ["one"] and draft.tables == ["t"]


@pytest.mark.parametrize(
    ("answer", "rows", "bad"),
    [
        ("There are 400 customers.", [(400,)], []),
        ("Revenue was 1,234.5 dollars.", [(1234.5,)], []),
        ("Revenue was 1234.57.", [(1234.5678,)], []),  # rounded from the result
        ("There are 401 customers.", [(400,)], ["401"]),
        ("Top 3: a (5), b (4), c (2).", [("a", 5), ("b", 4), ("c", 2)], []),  # 3 is the count
        ("In 2013 sales were 10.", [(10,)], []),  # 2013 is in the question
        ("Sales were 12.", [("12 units",)], []),  # inside a text value
    ],
)
def test_numbers_in_the_answer_must_come_from_the_result(
    answer: str, rows: list[tuple[object, ...]], bad: list[str]
) -> None:
    assert unsupported_numbers(answer, rows, ["sales in 2013", "3"]) == bad


@pytest.mark.parametrize(
    ("columns", "rows", "total", "text"),
    [
        (["n"], [], 0, "No rows match: the query ran and its result is empty."),
        (["n"], [(7,)], 1, "n: 7"),
        (["a", "b"], [(1, 2)], 1, "a: 1; b: 2"),
        (["a"], [(1,), (2,)], 2, "2 rows of a."),
    ],
)
def test_template_answers(columns: list[str], rows: list[tuple[int, ...]], total: int,
                          text: str) -> None:  # fmt: skip
    assert template_answer(columns, rows, total) == text


@pytest.mark.parametrize(
    ("text", "provider", "name", "base_url"),
    [
        ("openai:gpt-4o-mini", "openai", "gpt-4o-mini", None),
        ("anthropic:claude-3-5-haiku-latest", "anthropic", "claude-3-5-haiku-latest", None),
        ("openai-compatible:qwen@http://127.0.0.1:8080/v1/", "openai-compatible", "qwen",
         "http://127.0.0.1:8080/v1"),
        ("local", "local", "1.5b", None),
        ("local:0.5b", "local", "0.5b", None),
    ],
)  # fmt: skip
def test_model_settings_parse(text: str, provider: str, name: str, base_url: str | None) -> None:
    spec = parse_spec(text)
    assert (spec.provider, spec.name, spec.base_url) == (provider, name, base_url)
    assert spec.small == (provider == "local")


@pytest.mark.parametrize(
    "text", ["", "gpt-4o", "openai-compatible:qwen", "openai-compatible:qwen@ftp://x", "local:7b"]
)
def test_a_bad_model_setting_says_how_to_write_it(text: str) -> None:
    with pytest.raises(ModelNotConfiguredError) as caught:
        parse_spec(text)
    assert caught.value.hint


def test_the_environment_wins_over_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[llm]\nmodel = "anthropic:claude-x"\nfast = "openai:gpt-4o-mini"\n')
    monkeypatch.setenv("SCHEMAWISE_CONFIG", str(config))
    monkeypatch.delenv("SCHEMAWISE_LLM", raising=False)
    monkeypatch.delenv("SCHEMAWISE_LLM_FAST", raising=False)
    assert configured_spec() == parse_spec("anthropic:claude-x")
    assert configured_spec("fast") == parse_spec("openai:gpt-4o-mini")
    monkeypatch.setenv("SCHEMAWISE_LLM", "local")
    assert configured_spec() == parse_spec("local")
    config.write_text("[llm\n")
    monkeypatch.delenv("SCHEMAWISE_LLM")
    with pytest.raises(ModelNotConfiguredError, match="not valid TOML"):
        configured_spec()


@pytest.mark.parametrize(
    ("message", "intent"),
    [
        ("SELECT nam FROM customers", "fix_query"),
        ("why does this fail?\nselect a from t where x = 1", "fix_query"),
        ("which table has deliveries?", "find_tables"),
        ("where are refunds stored?", "find_tables"),
        ("what columns hold the customer's email?", "find_tables"),
        ("what does amt mean?", "explain_metadata"),
        ("how are orders and shipments related?", "explain_metadata"),
        ("describe the table refunds", "explain_metadata"),
        ("total revenue per region last quarter", "write_query"),
        ("which sales rep's customers placed the most shipped orders?", "write_query"),
    ],
)
def test_grammar_routes_the_clear_cases(message: str, intent: str) -> None:
    assert route(message) == intent


def test_a_message_grammar_cannot_place_is_a_question_for_sql() -> None:
    assert route_by_grammar("revenue by month") is None


def test_the_ranker_keeps_what_the_model_scored_high_in_its_order() -> None:
    candidates = [Candidate("a", 3.0), Candidate("b", 2.0), Candidate("c", 1.0)]
    scores = read_scores(
        '{"tables": [{"name": "a", "score": 2, "reason": "no"}, '
        '{"name": "b", "score": 6, "reason": "bridge"}, {"name": "c", "score": 9}]}'
    )
    kept = rerank(candidates, scores)
    assert [c.table for c in kept] == ["c", "b"]
    assert kept[1].reasons == ["model: 6/10 bridge"]


def test_the_ranker_keeps_the_engines_first_choice_when_the_model_keeps_none() -> None:
    candidates = [Candidate("a", 3.0), Candidate("b", 2.0)]
    assert [c.table for c in rerank(candidates, {"a": (1, ""), "b": (2, "")})] == ["a"]
    assert read_scores("no json here") == {}


def test_the_failure_log_becomes_a_golden_set_to_review(tmp_path: Path) -> None:
    from schemawise.agent.failures import entries, record, to_golden
    from schemawise.errors import SchemawiseError
    from schemawise.eval.golden import load_golden

    log = tmp_path / "failures.jsonl"
    record({"question": "orders per customer", "source": "shop", "outcome": "fixed",
            "sql": "SELECT 1", "error_classes": ["unknown_column"], "pack_tables": ["t"],
            "attempts": []}, log)  # fmt: skip
    with log.open("a") as handle:
        handle.write('{"torn')  # a crash mid-line: skipped when read
    assert len(entries(log)) == 1
    db = tmp_path / "shop.sqlite"
    db.write_bytes(b"")
    golden = tmp_path / "review.yaml"
    golden.write_text(to_golden(entries(log), {"shop": f"sqlite:///{db}"}))
    (item,) = load_golden(golden)
    assert item.gold == ("SELECT 1",) and item.question == "orders per customer"
    assert "review this gold" in golden.read_text()
    record({"question": "q2", "source": "shop", "outcome": "failed", "sql": "SELECT x",
            "attempts": [{"sql": "SELECT x"}]}, log)  # fmt: skip
    golden.write_text(to_golden(entries(log), {"shop": f"sqlite:///{db}"}))
    with pytest.raises(SchemawiseError, match="gold"):  # a failed one needs its gold written
        load_golden(golden)


def test_loading_the_embedder_leaves_logging_quiet(tmp_path: Path) -> None:
    """wordllama sets the root logger to INFO on import; `ask` would print every HTTP call."""
    import subprocess
    import sys

    code = (
        "import logging; from schemawise.index.embed import get_embedder; "
        "get_embedder().embed(['x']); r = logging.getLogger(); "
        "print(len(r.handlers), r.level)"
    )
    env = {"SCHEMAWISE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          check=True)  # fmt: skip
    assert done.stdout.split() == ["0", "30"]


def test_the_fix_notes_say_where_a_misplaced_column_lives_and_how_to_join_it() -> None:
    from schemawise.agent.researcher import column_facts
    from schemawise.validate.check import check_sql
    from tests.unit.test_check import GRAPH

    sql = "SELECT o.order_id FROM orders o WHERE o.quantity > 2"
    facts = column_facts(GRAPH, check_sql(sql, GRAPH).errors)
    assert facts == [
        "orders has no column quantity; its columns are: order_id, customer_id, status, amt.",
        "quantity is a column of order_items. Reach it from orders with JOIN ... ON "
        "order_items.order_id = orders.order_id.",
    ]
    # An unqualified unknown column names no table; the notes only say where it lives.
    facts = column_facts(GRAPH, check_sql("SELECT quantity FROM orders", GRAPH).errors)
    assert facts == ["quantity is a column of order_items."]
