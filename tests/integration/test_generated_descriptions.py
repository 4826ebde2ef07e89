"""Model-written table descriptions (enrich/generated.py) on the real Chinook database, with a
scripted model (pydantic-ai's FunctionModel): what it says reaches the cards, the pack finds the
table by those words, the replies are kept and `sync` reuses them without a model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from schemawise import api
from schemawise.agent.llm import LLM
from schemawise.enrich.generated import INSTRUCTIONS, cached_only, with_model
from schemawise.index.sources import descriptions_cache, index_source

# What a model would say about the two tables a purchase question needs (scripted).
SAID = {
    "InvoiceLine": {"description": "one line of a customer's purchase: a track bought",
                    "synonyms": ["purchase line", "sale", "purchased item"]},
    "Invoice": {"description": "a customer's purchase, with its total",
                "synonyms": ["purchase", "order", "receipt"]},
}  # fmt: skip


class Model:
    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        assert info.instructions == INSTRUCTIONS
        prompt = "\n".join(
            str(p.content) for m in messages if isinstance(m, ModelRequest) for p in m.parts
        )
        table = prompt.splitlines()[0].removeprefix("Table: ")
        self.asked.append(table)
        reply = SAID.get(table, {"description": "", "synonyms": []})
        return ModelResponse(parts=[TextPart(json.dumps(reply))])


@pytest.fixture()
def chinook(bench_dir: Path) -> str:
    return f"sqlite:///{bench_dir / 'chinook' / 'chinook.sqlite'}"


def test_the_words_a_model_gives_a_table_bring_it_into_the_pack(
    embedded_url: str, chinook: str
) -> None:
    descriptions_cache("chinook_described").unlink(missing_ok=True)
    model = Model()
    llm = LLM(FunctionModel(model), name="scripted", small=True)
    index_source(embedded_url, chinook, "chinook_described", describe=with_model(llm))
    assert sorted(model.asked) == sorted(
        ["Album", "Artist", "Customer", "Employee", "Genre", "Invoice", "InvoiceLine",
         "MediaType", "Playlist", "PlaylistTrack", "Track"]
    )  # fmt: skip
    # The table's card now holds the question's own word: it is the best document found.
    assert _best_table_card("tracks never purchased", "chinook_described", embedded_url) == (
        "InvoiceLine"
    )
    # And the pack holds it: the table's other names count as words it accounts for, so one
    # strong card is not outvoted by the join-path documents naming Track's neighbours.
    pack = api.context("tracks never purchased", sources=["chinook_described"],
                       index_url=embedded_url)  # fmt: skip
    assert {"Track", "InvoiceLine"} <= {t.name for t in pack.tables}
    reasons = next(t.reasons for t in pack.tables if t.name == "InvoiceLine")
    assert "its other names match: purchased" in reasons, reasons  # the pack says why
    kept = json.loads(descriptions_cache("chinook_described").read_text())
    assert len(kept) == 11 and any("purchase" in v for v in kept.values())
    # Again without a model (sync): the kept replies are reused, nothing is asked.
    report = index_source(embedded_url, chinook, "chinook_described", describe=cached_only)
    assert report.embedded == 0  # the same cards: nothing to embed again


def test_without_descriptions_the_same_question_finds_no_invoice_card(
    embedded_url: str, chinook: str
) -> None:
    index_source(embedded_url, chinook, "chinook_plain")
    assert _best_table_card("tracks never purchased", "chinook_plain", embedded_url) == "Track"
    pack = api.context("tracks never purchased", sources=["chinook_plain"],
                       index_url=embedded_url)  # fmt: skip
    assert "InvoiceLine" not in {t.name for t in pack.tables}


def _best_table_card(question: str, source: str, index_url: str) -> str:
    import psycopg

    from schemawise.index import store
    from schemawise.index.embed import get_embedder
    from schemawise.retrieve.words import read_question

    words = read_question(question)
    with psycopg.connect(index_url) as conn:
        hits = store.search(conn, words.lexical, get_embedder().embed([words.text])[0],
                            kinds=("table",), sources=[source], n=5)  # fmt: skip
    return hits[0].table
