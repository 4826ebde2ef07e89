"""Containment as evidence: how unlikely a column's values all lie in a key's by chance."""

import math

import pytest

from schemawise.graph.containment import (
    at_least_log10,
    chance_log10,
    improbable_parent,
    normalise,
)


def values(*items: object) -> set[str]:
    return {normalise(v) for v in items}


SPARSE_IDS = values(1025, 1101, 1247, 1304, 1381, 1468, 1510, 1641, 1689, 1709, 1782, 1911, 1934)


WORDS = {f"w{chr(97 + n)}q" for n in range(25)}
WORDS_19 = set(sorted(WORDS)[:19])


@pytest.mark.parametrize(
    ("hits", "trials", "hit_log10", "expected"),
    [
        (3, 3, -1.0, -3.0),  # every trial: the product
        (0, 5, -1.0, 0.0),  # none needed: certain
        (1, 2, math.log10(0.5), pytest.approx(math.log10(0.75))),
        (2, 3, math.log10(0.5), pytest.approx(math.log10(0.5))),
    ],
)
def test_chance_of_at_least_so_many_hits(
    hits: int, trials: int, hit_log10: float, expected: float
) -> None:
    assert at_least_log10(hits, trials, hit_log10) == expected


@pytest.mark.parametrize(
    ("value", "text"),
    [(3, "3"), (3.0, "3"), ("3", "3"), (2.5, "2.5"), (" ams", " ams"), (True, "1")],
)
def test_values_compare_as_integers_when_integral(value: object, text: str) -> None:
    assert normalise(value) == text


@pytest.mark.parametrize(
    ("child", "parent", "expected"),
    [
        # A dense id range holds any small numbers: no evidence.
        (values(2, 3, 5), values(*range(1, 21)), 0.0),
        # Sparse ids: three hits among 13 keys spread over 910 numbers.
        (values(1025, 1510, 1934), SPARSE_IDS, pytest.approx(3 * math.log10(13 / 910))),
        # Words: one chance in ten each.
        (values("asia", "europe", "africa"), values("asia", "europe", "africa", "oceania"), -3.0),
        # Not contained: no evidence at all.
        (values(1025, 9999), SPARSE_IDS, 0.0),
        # A few orphans: 19 of 20 words found, at least 19 hits in 20 at one in ten each.
        (WORDS_19 | {"zz"}, WORDS, pytest.approx(math.log10(20 * 0.1**19 * 0.9 + 0.1**20))),
        # More orphans than the bar allows (18 of 20): no evidence.
        (set(list(WORDS_19)[:18]) | {"zz", "yy"}, WORDS, 0.0),
        # An orphan far below a dense key does not make the key look sparse.
        (values(*range(1, 40), -1523), values(*range(1, 4080)), 0.0),
        # A stray '' among small numbers is a miss, not a reason to read them as words.
        (values(*range(18, 80), ""), values(*range(1, 101)), 0.0),
        # Numbers stored as text compare with integer keys.
        (values("1025", "1247", "1934"), SPARSE_IDS, pytest.approx(3 * math.log10(13 / 910))),
    ],
)
def test_chance_of_containment(child: set[str], parent: set[str], expected: float) -> None:
    assert chance_log10(child, parent) == expected


def test_sparse_ids_name_their_parent_whatever_the_column_is_called() -> None:
    parents = {("highschooler", "id"): SPARSE_IDS, ("grade", "id"): values(*range(1, 13))}
    found = improbable_parent(values(1101, 1304, 1689, 1911), parents, child_unique=False)
    assert found is not None and found.parent == ("highschooler", "id")


@pytest.mark.parametrize(
    ("child", "child_unique", "parents", "expected"),
    [
        # Dense ranges everywhere: no parent stands out.
        (values(3, 4, 5), False, {("employee", "id"): values(*range(1, 9))}, None),
        # Fewer than three values prove nothing.
        (values(1025, 1934), False, {("h", "id"): SPARSE_IDS}, None),
        # A unique column holding every value of the key: which side is the parent is unknown.
        (SPARSE_IDS, True, {("h", "id"): SPARSE_IDS}, None),
        # Not unique, it references the key even when it covers all of it.
        (SPARSE_IDS, False, {("h", "id"): SPARSE_IDS}, ("h", "id")),
        # A subtype's ids inside its supertype's inside a wider table's: the nearest wins.
        (
            values(1101, 1247, 1510),
            True,
            {
                ("attraction", "id"): SPARSE_IDS,
                ("museum", "id"): values(1101, 1247, 1510, 1641),
            },
            ("museum", "id"),
        ),
        # A supertype holding every value beats a subtype holding all but one.
        (
            WORDS_19 | {"company"},
            False,
            {("person", "id"): WORDS, ("party", "id"): WORDS | {"company"}},
            ("party", "id"),
        ),
        # Two unique keys sharing all but one value each way: a one-to-one link, direction
        # unknown.
        (
            WORDS_19 | {"zz"},
            True,
            {("mailbox", "box"): WORDS_19 | {"yy"}},
            None,
        ),
        # Two unrelated keys both hold the values against the odds: no choice.
        (
            values("x1", "x2", "x3"),
            False,
            {
                ("a", "code"): values("x1", "x2", "x3", "a"),
                ("b", "code"): values("x1", "x2", "x3", "b"),
            },
            None,
        ),
    ],
)
def test_improbable_parent(
    child: set[str],
    child_unique: bool,
    parents: dict[tuple[str, str], set[str]],
    expected: tuple[str, str] | None,
) -> None:
    found = improbable_parent(child, parents, child_unique=child_unique)
    assert (found.parent if found else None) == expected
