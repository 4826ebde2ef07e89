"""Database choice with a confidence, in the assistant: when another database fits the
question about as well as the chosen one, the reply names it instead of choosing in silence."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from schemawise import api
from schemawise.agent.assistant import AskOptions, Reply
from schemawise.retrieve.context import ContextSettings
from tests.integration.test_assistant import Script, assistant, sql_reply

SHOP = """
CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, name TEXT, city TEXT);
CREATE TABLE orders (order_id INTEGER PRIMARY KEY,
                     customer_id INTEGER REFERENCES customers(customer_id),
                     ordered_on TEXT, total REAL);
INSERT INTO customers VALUES (1, 'Ada', 'Leeds'), (2, 'Bo', 'York');
INSERT INTO orders VALUES (1, 1, '2024-01-02', 10.5), (2, 1, '2024-02-03', 7.0),
                          (3, 2, '2024-03-04', 3.25);
"""
ZOO = """
CREATE TABLE animals (animal_id INTEGER PRIMARY KEY, species TEXT, enclosure TEXT);
CREATE TABLE keepers (keeper_id INTEGER PRIMARY KEY, name TEXT,
                      animal_id INTEGER REFERENCES animals(animal_id));
INSERT INTO animals VALUES (1, 'otter', 'river'), (2, 'lynx', 'forest');
INSERT INTO keepers VALUES (1, 'Cy', 1), (2, 'Di', 2);
"""
QUESTION = "how many orders did each customer place?"
SQL = (
    "SELECT c.name, count(*) AS orders FROM customers c "
    "JOIN orders o ON o.customer_id = c.customer_id GROUP BY c.name"
)


@pytest.fixture(scope="module")
def close_sources(embedded_url: str, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    folder = tmp_path_factory.mktemp("close_calls")
    names = []
    for name, script in (("cc_shop_eu", SHOP), ("cc_shop_us", SHOP), ("cc_zoo", ZOO)):
        path = folder / f"{name}.sqlite"
        with sqlite3.connect(path) as conn:
            conn.executescript(script)
        api.index(f"sqlite:///{path}", name, index_url=embedded_url, profile=False)
        names.append(name)
    return names


def answered(embedded_url: str, tmp_path: Path, sources: list[str]) -> Reply:
    """The question answered by a scripted writer over `sources`."""
    reply = assistant(embedded_url, Script(write=[sql_reply(SQL)]), tmp_path).ask(
        QUESTION, options=AskOptions(sources=sources, answer=False)
    )
    assert reply.status == "answered", reply.failure
    return reply


def test_two_databases_that_fit_alike_are_named_not_chosen_in_silence(
    embedded_url: str, close_sources: list[str], tmp_path: Path
) -> None:
    reply = answered(embedded_url, tmp_path, ["cc_shop_eu", "cc_shop_us"])
    (other,) = reply.alternatives
    assert {reply.source, other.source} == {"cc_shop_eu", "cc_shop_us"}
    assert other.score >= 0.9
    # The answer says which database it is from, and how to ask the other.
    assert any(f"--source {other.source}" in a for a in reply.assumptions)
    # The tables-only intent says so too.
    tables = assistant(embedded_url, Script(), tmp_path).ask(
        "which tables hold orders?",
        options=AskOptions(sources=["cc_shop_eu", "cc_shop_us"], intent="find_tables"),
    )
    # (Two copies of one schema tie: which of them each question picks is not the point.)
    assert tables.source in {"cc_shop_eu", "cc_shop_us"}
    assert [a.source for a in tables.alternatives] == [
        s for s in ("cc_shop_eu", "cc_shop_us") if s != tables.source
    ]


def test_a_clear_choice_names_no_alternative(
    embedded_url: str, close_sources: list[str], tmp_path: Path
) -> None:
    reply = answered(embedded_url, tmp_path, ["cc_shop_eu", "cc_zoo"])
    assert reply.source == "cc_shop_eu"
    assert reply.alternatives == []
    assert not any("--source" in a for a in reply.assumptions)


def test_without_a_model_the_close_call_comes_with_the_ready_prompt(
    embedded_url: str, close_sources: list[str]
) -> None:
    from schemawise.agent.assistant import Assistant

    reply = Assistant(None, index_url=embedded_url, failure_log=False).ask(
        QUESTION, options=AskOptions(sources=["cc_shop_eu", "cc_shop_us"], intent="write_query")
    )
    assert reply.status == "no_model"
    assert len(reply.alternatives) == 1
    assert any("--source" in a for a in reply.assumptions)


@pytest.mark.parametrize("picked", ["cc_shop_eu", "cc_shop_us"])
def test_with_a_model_the_model_picks_among_the_close_calls(
    embedded_url: str, close_sources: list[str], tmp_path: Path, picked: str
) -> None:
    script = Script(pick_source=[f'{{"database": "{picked}"}}'], write=[sql_reply(SQL)])
    both = AskOptions(sources=["cc_shop_eu", "cc_shop_us"], answer=False, pick_source=True)
    reply = assistant(embedded_url, script, tmp_path).ask(QUESTION, options=both)
    assert reply.status == "answered", reply.failure
    assert reply.source == picked
    # It was shown both databases with their tables, and the other is still named.
    (shown,) = script.prompts["pick_source"]
    assert "database cc_shop_eu:" in shown and "database cc_shop_us:" in shown
    assert "orders (order_id, customer_id, ordered_on, total)" in shown
    assert [a.source for a in reply.alternatives] == [s for s in close_sources[:2] if s != picked]
    # The two copies tie and ties go to the first name: a pick of the other is the model's.
    by_model = picked != "cc_shop_eu"
    assert reply.context["source_chosen_by"] == ("model" if by_model else "vote")
    (said,) = reply.assumptions
    assert f"about {picked}" in said and "--source" in said
    assert ("(the model's pick)" in said) == by_model
    assert ("× this one's" in said) == by_model  # the vote's choice, passed over


def test_the_model_is_not_asked_about_a_clear_choice_nor_by_default(
    embedded_url: str, close_sources: list[str], tmp_path: Path
) -> None:
    script = Script(write=[sql_reply(SQL), sql_reply(SQL)])
    helper = assistant(embedded_url, script, tmp_path)
    clear = AskOptions(sources=["cc_shop_eu", "cc_zoo"], answer=False, pick_source=True)
    assert helper.ask(QUESTION, options=clear).source == "cc_shop_eu"
    close = AskOptions(sources=["cc_shop_eu", "cc_shop_us"], answer=False)  # the default: off
    assert helper.ask(QUESTION, options=close).status == "answered"
    assert script.calls("pick_source") == 0


def test_a_model_that_names_no_candidate_leaves_the_vote_s_choice(
    embedded_url: str, close_sources: list[str], tmp_path: Path
) -> None:
    script = Script(pick_source=['{"database": "cc_zoo"}'], write=[sql_reply(SQL)])
    both = AskOptions(sources=["cc_shop_eu", "cc_shop_us"], answer=False, pick_source=True)
    reply = assistant(embedded_url, script, tmp_path).ask(QUESTION, options=both)
    assert script.calls("pick_source") == 1
    assert reply.status == "answered"
    assert reply.source == "cc_shop_eu"  # the vote's choice
    assert reply.context["source_chosen_by"] == "vote"
    assert [a.source for a in reply.alternatives] == ["cc_shop_us"]


def test_a_failed_pick_leaves_the_vote_s_choice_and_is_on_the_record(
    embedded_url: str, close_sources: list[str], tmp_path: Path
) -> None:
    script = Script(write=[sql_reply(SQL)])  # no reply for the pick: the call fails
    both = AskOptions(sources=["cc_shop_eu", "cc_shop_us"], answer=False, pick_source=True)
    reply = assistant(embedded_url, script, tmp_path).ask(QUESTION, options=both)
    assert reply.status == "answered"
    assert reply.source == "cc_shop_eu"
    assert reply.context["source_chosen_by"] == "vote"
    picks = [c for c in reply.usage["per_call"] if c["stage"] == "pick_source"]
    assert [c["ok"] for c in picks] == [False]


@pytest.mark.parametrize(
    ("picked", "kept", "chosen_by"),
    [
        # The pick is taken when its database answers the question…
        ("cc_shop_us", "cc_shop_us", "model"),
        # …and one the relevance floor would empty leaves the vote's choice: a model's pick
        # never turns an answerable question into "nothing found".
        ("cc_zoo", "cc_shop_eu", "vote"),
    ],
)
def test_a_pick_the_relevance_floor_would_empty_leaves_the_vote_s_choice(
    embedded_url: str,
    close_sources: list[str],
    monkeypatch: pytest.MonkeyPatch,
    picked: str,
    kept: str,
    chosen_by: str,
) -> None:
    import schemawise.retrieve.context as context_module

    def pick(
        question: str, ranking: list[tuple[str, float]], picker: object
    ) -> tuple[list[tuple[str, float]], bool]:
        # Whatever the vote's margin: the zoo is never a close call for this question, so the
        # window is stepped over to reach the floor's check.
        assert picker is not None and ranking[0][0] == "cc_shop_eu"
        return [(picked, 1.0), *((s, v) for s, v in ranking if s != picked)], True

    monkeypatch.setattr(context_module, "second_opinion", pick)
    settings = ContextSettings(source_picker=lambda question, candidates: picked)
    pack = api.context(QUESTION, sources=close_sources, settings=settings, index_url=embedded_url)
    assert pack.source == kept and pack.source_chosen_by == chosen_by
    assert {t.name for t in pack.tables} >= {"customers", "orders"}
    # Asked of the zoo alone, the floor does empty it: the fallback above is what kept the pack.
    alone = api.context(QUESTION, sources=["cc_zoo"], index_url=embedded_url)
    assert not alone.tables and alone.empty_reason
