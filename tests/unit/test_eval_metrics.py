"""Execution-accuracy comparison as the official evaluators compare (eval.metrics)."""

from __future__ import annotations

from typing import Any

import pytest

from schemawise.eval.metrics import (
    Convention,
    first_match,
    has_top_level_order_by,
    results_match,
)

Rows = list[tuple[Any, ...]]

# (gold, predicted, order_matters, convention, float_digits, expected, why)
CASES: list[tuple[Rows, Rows, bool, Convention, int | None, bool, str]] = [
    ([(1, "a"), (2, "b")], [(2, "b"), (1, "a")], False, "spider", None, True, "row order free"),
    ([(1, "a"), (2, "b")], [(2, "b"), (1, "a")], True, "spider", None, False, "ordered"),
    ([(1, "a"), (2, "b")], [(1, "a"), (2, "b")], True, "spider", None, True, "same order"),
    ([(1,), (1,), (2,)], [(1,), (2,), (2,)], False, "spider", None, False, "bag: counts"),
    ([(1,), (1,), (2,)], [(1,), (2,)], False, "spider", None, False, "bag: a row missing"),
    ([(1,), (1,), (2,)], [(1,), (2,), (2,)], False, "bird", None, True, "bird: sets"),
    ([(1,), (1,), (2,)], [(2,), (1,)], False, "bird", None, True, "bird: duplicates free"),
    ([(1,), (2,)], [(2,), (1,)], True, "bird", None, True, "bird: order never matters"),
    ([(1, "a"), (2, "b")], [("a", 1), ("b", 2)], False, "spider", None, True, "permuted cols"),
    ([(1, "a"), (2, "b")], [("b", 2), ("a", 1)], True, "spider", None, False, "permuted, order"),
    ([(1, "a"), (2, "b")], [("a", 1), ("b", 2)], True, "spider", None, True, "permuted, ordered"),
    ([(1, "a"), (2, "b")], [("a", 1), ("b", 2)], False, "bird", None, False, "bird: col order"),
    ([(1, "a"), (2, "b")], [("a", 1), ("b", 2)], False, "multiset", None, False, "multiset"),
    # A permutation must map whole rows, not each column's values on their own.
    ([(1, 2), (3, 4)], [(2, 3), (4, 1)], False, "spider", None, False, "columns, not values"),
    ([(1, 1, 2), (2, 2, 1)], [(2, 1, 1), (1, 2, 2)], False, "spider", None, True, "ties"),
    ([(1, 2)], [(1, 2, 3)], False, "spider", None, False, "an extra column"),
    ([], [], True, "spider", None, True, "both empty"),
    ([], [(1,)], False, "spider", None, False, "one empty"),
    ([(None,)], [(None,)], False, "spider", None, True, "NULL equals NULL"),
    ([(None, 1)], [(1, None)], False, "spider", None, True, "NULL, permuted"),
    ([(None,)], [(0,)], False, "spider", None, False, "NULL is not 0"),
    ([(None,)], [("",)], False, "bird", None, False, "NULL is not ''"),
    ([(1,)], [(1.0,)], False, "spider", None, True, "1 == 1.0, as in Python"),
    ([(0.1 + 0.2,)], [(0.3,)], False, "spider", None, False, "floats exact by default"),
    ([(0.1 + 0.2,)], [(0.3,)], False, "spider", 6, True, "floats rounded"),
    ([(2.0 / 3,)], [(0.6667,)], False, "bird", 4, True, "rounded to 4 digits"),
    ([(2.0 / 3,)], [(0.667,)], False, "bird", 4, False, "still differs at 4 digits"),
    ([(float("nan"),)], [(float("nan"),)], False, "spider", None, True, "NaN equals itself"),
    ([("a",)], [("A",)], False, "spider", None, False, "text is case-sensitive"),
]


@pytest.mark.parametrize(
    ("gold", "predicted", "order_matters", "convention", "digits", "expected"),
    [c[:6] for c in CASES],
    ids=[c[6] for c in CASES],
)
def test_results_match(
    gold: Rows,
    predicted: Rows,
    order_matters: bool,
    convention: Convention,
    digits: int | None,
    expected: bool,
) -> None:
    assert (
        results_match(
            gold,
            predicted,
            order_matters=order_matters,
            convention=convention,
            float_digits=digits,
        )
        is expected
    )


def test_rows_as_lists_compare_like_tuples() -> None:
    """The sandbox returns rows as lists."""
    assert results_match([[1, "a"]], [["a", 1]], order_matters=False)


def test_wide_permutations_are_found_fast() -> None:
    """Ten columns with the same values each (10! mappings by values alone): the search
    drops a partial mapping once its partial rows disagree, so it ends at once either way."""
    gold = [(0, 1) * 5, (1, 0) * 5]
    predicted = [(0,) * 5 + (1,) * 5, (1,) * 5 + (0,) * 5]  # evens first, then odds
    assert results_match(gold, predicted, order_matters=False)
    assert results_match(gold, predicted, order_matters=True)
    assert not results_match([*gold, (0, 0) * 5], [*predicted, (1,) * 10], order_matters=False)


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT a FROM t ORDER BY a", True),
        ("select a from t order by a desc limit 3", True),
        ("SELECT a FROM t WHERE x = (SELECT b FROM u ORDER BY b LIMIT 1)", False),
        ("SELECT a FROM t UNION SELECT b FROM u ORDER BY 1", True),
        ("WITH c AS (SELECT 1 AS x) SELECT x FROM c ORDER BY x", True),
        ("SELECT * FROM (SELECT a FROM t ORDER BY a)", False),
        ("SELECT count(*) FROM t", False),
        ("SELECT a FROM t ORDER BY", True),  # does not parse: the official text test
    ],
)
def test_top_level_order_by(sql: str, expected: bool) -> None:
    assert has_top_level_order_by(sql) is expected


def test_any_gold_counts() -> None:
    golds = [([(1,)], False), ([(2,)], False)]
    assert first_match(golds, [(1,)]) == 0
    assert first_match(golds, [(2,)]) == 1
    assert first_match(golds, [(3,)]) is None
    assert first_match([([(1,), (2,)], True), ([(2,), (1,)], True)], [(2,), (1,)]) == 1
