"""The linking bench's pure parts: why a gold table is missing, and one key for a database
however a golden set writes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from schemawise.bench.linking import missed_causes, same_database
from schemawise.retrieve.pack import ContextPack, TableChoice

PACK = ContextPack(
    question="q",
    source="golden/shop",
    tables=[TableChoice(name="orders", score=1.0)],
    passed_over=[
        TableChoice(name="Refunds", score=0.2, left_out="cut"),
        TableChoice(name="regions", score=0.3, left_out="full"),
    ],
)


@pytest.mark.parametrize(
    ("pack", "right_db", "causes"),
    [
        # Left out by the rerank: its cause, matched however the gold writes the name's case.
        (PACK, True, {"refunds": "cut", "regions": "full", "payments": "unmatched"}),
        # Another database chosen: every gold table is missed for that.
        (PACK, False, {"refunds": "database", "regions": "database", "payments": "database"}),
        # An empty pack (the relevance floor, or nothing matched).
        (
            ContextPack(question="q"),
            False,
            dict.fromkeys(["payments", "refunds", "regions"], "empty"),
        ),
    ],
)
def test_why_a_gold_table_is_missing(
    pack: ContextPack, right_db: bool, causes: dict[str, str]
) -> None:
    assert missed_causes(pack, {"refunds", "regions", "payments"}, right_db) == causes


def test_one_database_however_it_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "shop.sqlite").touch()
    written = ["shop.sqlite", f"sqlite:///{tmp_path}/shop.sqlite", str(tmp_path / "shop.sqlite"),
               f"sqlite:////{tmp_path}/shop.sqlite"]  # fmt: skip
    assert len({same_database(w) for w in written}) == 1
    assert same_database("shop.duckdb") != same_database("shop.sqlite")
    assert same_database("postgresql://r@h/dw") != same_database("postgresql://r@h/other")
