from pathlib import Path

import pytest

from schemawise.bench.fk_recovery import split_half
from schemawise.errors import BenchmarkDataError

NAMES = ["wta_1", "car_1", "battle_death", "concert_singer", "course_teach"]


@pytest.mark.parametrize(
    ("half", "expected"),
    [
        ("even", ["battle_death", "concert_singer", "wta_1"]),
        ("odd", ["car_1", "course_teach"]),
        (None, NAMES),
    ],
)
def test_halves_alternate_in_name_order(half: str | None, expected: list[str]) -> None:
    paths = [Path(f"/bench/{n}/{n}.sqlite") for n in NAMES]
    assert [p.stem for p in split_half(paths, half)] == expected


def test_unknown_half_is_refused() -> None:
    with pytest.raises(BenchmarkDataError):
        split_half([Path("a.sqlite")], "middle")
