"""Reading what a model says about a table, and what it is told (pure)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemawise.enrich import generated
from schemawise.enrich.generated import (
    MARK,
    cached_only,
    describe_tables,
    read_reply,
    structure_key,
    table_prompt,
    with_model,
)
from schemawise.enrich.metadata import Metadata
from schemawise.errors import ModelUnreachableError
from schemawise.graph.model import Column, Edge, SchemaGraph, Table

LINE = Table(name="InvoiceLine", columns=[Column(name="InvoiceLineId", type="INTEGER"),
                                         Column(name="UnitPrice", type="NUMERIC")])  # fmt: skip
GRAPH = SchemaGraph(
    tables=[LINE, Table(name="Invoice")],
    edges=[Edge(child_table="InvoiceLine", child_columns=["InvoiceId"], parent_table="Invoice",
                parent_columns=["InvoiceId"], cardinality="many_to_one")],
)  # fmt: skip


@pytest.mark.parametrize(
    ("reply", "description", "synonyms"),
    [
        ('{"description": "a line of a purchase", "synonyms": ["sale", "purchase"]}',
         f"a line of a purchase ({MARK})", ["sale", "purchase"]),
        ('Sure! ```json\n{"description": "", "synonyms": ["sale"]}\n```', None, ["sale"]),
        ('{"description": "x", "synonyms": "not a list"}', f"x ({MARK})", []),
        ('{"synonyms": ["a", "b", "c", "d", "e", "f", "g", "h"]}', None,
         ["a", "b", "c", "d", "e", "f"]),
    ],
)  # fmt: skip
def test_a_reply_is_read_leniently(
    reply: str, description: str | None, synonyms: list[str]
) -> None:
    found = read_reply(reply)
    assert found is not None
    assert found.description == description and found.synonyms == synonyms


@pytest.mark.parametrize("reply", ["no json here", '{"description": "", "synonyms": []}', "{}"])
def test_a_reply_saying_nothing_describes_nothing(reply: str) -> None:
    assert read_reply(reply) is None


def test_the_model_is_told_columns_values_and_joins() -> None:
    prompt = table_prompt(LINE, GRAPH, {"invoiceline.unitprice": ["0.99", "1.99"]})
    assert prompt.splitlines()[0] == "Table: InvoiceLine"
    assert "- UnitPrice NUMERIC (e.g. 0.99, 1.99)" in prompt
    assert "- InvoiceLine.InvoiceId -> Invoice" in prompt


def test_the_structure_key_changes_with_the_columns() -> None:
    wider = LINE.model_copy(update={"columns": [*LINE.columns, Column(name="Qty", type="INT")]})
    assert structure_key(LINE) == structure_key(LINE.model_copy())
    assert structure_key(LINE) != structure_key(wider)


def test_kept_replies_are_reused_until_the_instructions_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []

    def describe(prompt: str) -> str:
        asked.append(prompt.splitlines()[0])
        return '{"description": "a line of a purchase", "synonyms": ["sale"]}'

    cache = tmp_path / "descriptions.json"
    first = describe_tables(GRAPH, Metadata(), {}, describe, cache=cache)
    assert first["InvoiceLine"].synonyms == ["sale"] and len(asked) == 2
    describe_tables(GRAPH, Metadata(), {}, describe, cache=cache)
    assert len(asked) == 2  # kept: nothing asked again
    monkeypatch.setattr(generated, "INSTRUCTIONS_KEY", "changed")
    again = describe_tables(GRAPH, Metadata(), {}, describe, cache=cache)
    assert len(asked) == 4 and again["InvoiceLine"].synonyms == ["sale"]


@pytest.mark.parametrize("earlier", ["", ":older-instructions"])
def test_without_a_model_a_reply_kept_under_earlier_instructions_is_still_used(
    tmp_path: Path, earlier: str
) -> None:
    cache = tmp_path / "descriptions.json"
    reply = '{"description": "a line of a purchase", "synonyms": ["sale"]}'
    cache.write_text(json.dumps({f"{structure_key(LINE)}{earlier}": reply}))
    said: list[str] = []
    found = describe_tables(GRAPH, Metadata(), {}, cached_only, cache=cache, say=said.append)
    assert found["InvoiceLine"].synonyms == ["sale"]
    assert "Invoice" not in found and said == []  # nothing kept for it, no model to ask
    # With a model, the earlier reply is asked again, and it says so.
    fresh = '{"description": "one line of a purchase", "synonyms": ["order line"]}'
    again = describe_tables(GRAPH, Metadata(), {}, lambda _: fresh, cache=cache,
                            say=said.append)  # fmt: skip
    assert again["InvoiceLine"].synonyms == ["order line"]
    assert any("InvoiceLine (asked again: new instructions)" in s for s in said), said


def test_without_a_model_the_latest_earlier_reply_is_used(tmp_path: Path) -> None:
    cache = tmp_path / "descriptions.json"
    first = '{"description": "first", "synonyms": ["one"]}'
    latest = '{"description": "latest", "synonyms": ["two"]}'
    key = structure_key(LINE)
    cache.write_text(json.dumps({key: first, f"{key}:newer": latest}))
    found = describe_tables(GRAPH, Metadata(), {}, cached_only, cache=cache)
    assert found["InvoiceLine"].synonyms == ["two"]


def test_a_model_that_cannot_be_reached_stops_the_describing() -> None:
    class Unreachable:
        def fresh(self) -> Unreachable:
            return self

        def run(self, *_: object) -> str:
            raise ModelUnreachableError("down", "start it")

    with pytest.raises(ModelUnreachableError):
        describe_tables(GRAPH, Metadata(), {}, with_model(Unreachable()))


def test_sync_goes_on_with_the_kept_replies_when_the_model_cannot_be_reached(
    tmp_path: Path,
) -> None:
    from schemawise.index.sources import _or_kept

    def unreachable(prompt: str) -> str:
        raise ModelUnreachableError("down", "start it")

    cache = tmp_path / "descriptions.json"
    reply = '{"description": "a line of a purchase", "synonyms": ["sale"]}'
    cache.write_text(json.dumps({f"{structure_key(LINE)}:older": reply}))
    found = describe_tables(GRAPH, Metadata(), {}, _or_kept(unreachable), cache=cache)
    assert found["InvoiceLine"].synonyms == ["sale"] and "Invoice" not in found
