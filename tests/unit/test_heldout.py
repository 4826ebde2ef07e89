"""The held-out set's builder and questions (src/schemawise/bench/heldout.py), without its
data: the values it reads, the keys it declares, the questions' gold SQL."""

from __future__ import annotations

import json
import math

import pytest
import sqlglot
from sqlglot import exp

from schemawise.bench import heldout

LAHMAN_TABLES = {
    *heldout.LAHMAN_PRIMARY, *heldout.LAHMAN_PLAYER_TABLES, *heldout.LAHMAN_TEAM_SEASON_TABLES,
    "SeriesPost", "AwardsShareManagers",
}  # fmt: skip
FLIGHTS_TABLES = {"airlines", "airports", "flights", "planes", "weather"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", None), ("NA", None), ("12", 12), ("1.5", 1.5), ("aaronha01", "aaronha01"),
     # Python reads these as numbers; the data means text.
     ("1_000", "1_000"), ("nan", "nan")],
)  # fmt: skip
def test_values_are_read_as_sqlite_should_hold_them(text: str, expected: object) -> None:
    assert heldout._number(text) == expected


def test_an_infinite_earned_run_average_stays_a_number() -> None:
    value = heldout._number("inf")
    assert isinstance(value, float) and math.isinf(value)


@pytest.mark.parametrize(
    ("values", "kind"),
    [([1, None, 3], "INTEGER"), ([1, 2.5], "REAL"), ([1, "x"], "TEXT"), ([None], "INTEGER")],
)
def test_a_column_takes_the_type_all_its_values_fit(values: list[heldout.Value], kind: str) -> None:
    assert heldout._column_type(values) == kind


def test_every_declared_key_joins_tables_of_its_database() -> None:
    for keys, tables in ((heldout.LAHMAN_FOREIGN, LAHMAN_TABLES),
                         (heldout.FLIGHTS_FOREIGN, FLIGHTS_TABLES)):  # fmt: skip
        for child, columns, parent, parent_columns in keys:
            assert child in tables and parent in tables
            assert len(columns) == len(parent_columns) >= 1


def test_every_gold_query_reads_tables_of_its_own_database() -> None:
    rows = [json.loads(line) for line in heldout.QUESTIONS.read_text().splitlines() if line]
    assert len(rows) == 36
    known = {"lahman": LAHMAN_TABLES, "nycflights13": FLIGHTS_TABLES}
    for row in rows:
        tree = sqlglot.parse_one(row["query"], read="sqlite")
        tables = {t.name for t in tree.find_all(exp.Table)}
        assert tables and tables <= known[row["db_id"]], row["question"]
