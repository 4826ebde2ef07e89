"""Table cards read by the word reader (retrieve/card_reading.py), with a toy reader whose
vectors say which texts are alike."""

from __future__ import annotations

import pytest

from schemawise.graph.model import Column, SchemaGraph, Table
from schemawise.retrieve.card_reading import card_nearness, card_text, card_vectors, nearest_card
from tests.toy_embedder import AxisEmbedder

# Texts on one axis are alike; any other text is far from all.
AXES = {
    "likes: student id, liked id": 0,
    "how many crushes per pupil": 0,
    "orchestra: orchestra id, conductor id": 1,
    "performance: performance id, orchestra id": 2,
}


class ToyReader(AxisEmbedder):
    """Cards and questions alike by axis; any other text far from all."""

    name = "toy-reader"

    def __init__(self) -> None:
        super().__init__(AXES, dim=4)


def graph(version: str, *tables: tuple[str, list[str]]) -> SchemaGraph:
    return SchemaGraph(
        version=version,
        tables=[
            Table(name=name, columns=[Column(name=c, type="int") for c in columns])
            for name, columns in tables
        ],
    )


@pytest.mark.parametrize(
    ("name", "columns", "text"),
    [
        ("Likes", ["student_id", "liked_id"], "likes: student id, liked id"),
        ("main.OrderItems", ["orderId", "QTY"], "order items: order id, qty"),
        ("empty", [], "empty: "),
    ],
)
def test_a_card_is_the_tables_name_and_its_columns_as_words(
    name: str, columns: list[str], text: str
) -> None:
    assert card_text(graph("v", (name, columns)), 0) == text


def test_each_database_is_as_near_as_its_nearest_card() -> None:
    network = graph("n1", ("likes", ["student_id", "liked_id"]), ("highschooler", ["name"]))
    orchestra = graph(
        "o1",
        ("orchestra", ["orchestra_id", "conductor_id"]),
        ("performance", ["performance_id", "orchestra_id"]),
    )
    near = card_nearness(
        "how many crushes per pupil", {"network": network, "orchestra": orchestra}, ToyReader()
    )
    assert near == pytest.approx({"network": 1.0, "orchestra": 0.0})


def test_cards_are_embedded_once_per_schema_version() -> None:
    reader = ToyReader()
    first = graph("same-version", ("likes", ["student_id", "liked_id"]))
    card_vectors(first, reader)
    # The graph is rebuilt for each question: the same version is not embedded again.
    again = graph("same-version", ("likes", ["student_id", "liked_id"]))
    card_vectors(again, reader)
    assert reader.calls == [["likes: student id, liked id"]]
    changed = graph("other-version", ("likes", ["student_id", "liked_id"]))
    card_vectors(changed, reader)
    assert len(reader.calls) == 2


def test_a_database_without_tables_is_not_read() -> None:
    assert (
        card_nearness(
            "anything",
            {
                "empty": graph(
                    "e",
                )
            },
            ToyReader(),
        )
        == {}
    )
    assert card_nearness("anything", {}, ToyReader()) == {}


def test_the_floor_reads_only_the_tables_asked_for_each_once() -> None:
    reader = ToyReader()
    orchestra = graph(
        "o-some",
        ("orchestra", ["orchestra_id", "conductor_id"]),
        ("performance", ["performance_id", "orchestra_id"]),
        ("likes", ["student_id", "liked_id"]),
    )
    assert nearest_card("how many crushes per pupil", orchestra, ["orchestra"], reader) == 0.0
    assert nearest_card("how many crushes per pupil", orchestra, ["likes", "nope"], reader) == 1.0
    cards = [c for call in reader.calls for c in call if ":" in c]
    assert cards == ["orchestra: orchestra id, conductor id", "likes: student id, liked id"]
    assert nearest_card("anything", orchestra, ["likes"], reader) == 0.0
    assert len([c for call in reader.calls for c in call if ":" in c]) == 2  # read once
    assert nearest_card("anything", orchestra, ["nope"], reader) is None
