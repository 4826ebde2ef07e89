"""Execution accuracy: does a predicted query return what a gold query returns, compared as the
official evaluators compare. Pure functions over rows (sequences of values).

Conventions (`Convention`), each as its evaluator does it:

- ``spider`` — test-suite-sql-eval's ``exec_eval.result_eq``: both empty → equal; otherwise the
  same number of rows and of columns, and some permutation of the prediction's columns makes
  the two results equal as multisets of rows (as lists when order matters). The official
  code samples 20 rows to narrow the permutations of results wider than three columns and
  then tries every permutation left; here a column may only map onto a gold column holding
  the same multiset of values, and a depth-first search drops a partial mapping as soon as
  the partial rows disagree: exact, deterministic, and fast on real results.
- ``bird`` — BIRD's ``evaluation.py``: ``set(predicted) == set(gold)``: neither duplicates,
  row order nor an ORDER BY matter; column order does.
- ``multiset`` — the plain reading: equal as multisets of rows (as lists when order matters),
  column order as written.

Order matters when the gold query has a top-level ORDER BY (`order_matters`). The official
Spider code looks for the text ``order by`` anywhere in the gold query, so an ORDER BY inside
a subquery (``WHERE x = (SELECT … ORDER BY … LIMIT 1)``) also makes it compare in order; the
top level is what decides the order of the rows returned, so only it counts here.

Values compare with Python's ``==`` (``1 == 1.0``), as in both official evaluators, which do not
round floats. ``float_digits`` rounds floats first, for queries that compute one number two
ways (``AVG(x)`` against ``SUM(x) / COUNT(x)``) and differ in the last bits: off by default, so
that figures stay comparable with the official ones.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any, Literal

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

Convention = Literal["spider", "bird", "multiset"]
CONVENTIONS: tuple[Convention, ...] = ("spider", "bird", "multiset")
Row = tuple[Hashable, ...]

# Partial column assignments tried at most by the permutation search. Narrowing by each
# column's values and pruning by partial rows keep real results far below it; a contrived
# result could pass it, and then counts as different rather than running for minutes.
MAX_STEPS = 100_000


def has_top_level_order_by(sql: str, dialect: str = "sqlite") -> bool:
    """Whether the rows a query returns come in a defined order: an ORDER BY on the outermost
    SELECT or set operation. Unparseable SQL falls back to the official text test."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except SqlglotError:
        return "order by" in " ".join(sql.lower().split())
    while isinstance(tree, exp.Subquery):  # (SELECT … ORDER BY …) written in parentheses
        tree = tree.this
    return isinstance(tree, exp.Query) and tree.args.get("order") is not None


def _value(value: Any, float_digits: int | None) -> Hashable:
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"  # NaN != NaN would make a result differ from itself
        if float_digits is not None:
            return round(value, float_digits)
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    if isinstance(value, list):  # rows from the sandbox are lists; values should not be
        return tuple(_value(v, float_digits) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), _value(v, float_digits)) for k, v in value.items()))
    return value  # type: ignore[no-any-return]


def normalise(rows: Sequence[Sequence[Any]], float_digits: int | None = None) -> list[Row]:
    """Rows as tuples of hashable values, floats rounded when `float_digits` is given."""
    return [tuple(_value(v, float_digits) for v in row) for row in rows]


def _same_rows(gold: list[Row], predicted: list[Row], order_matters: bool) -> bool:
    if order_matters:
        return gold == predicted
    return Counter(gold) == Counter(predicted)


def _candidate_columns(gold: list[Row], predicted: list[Row], width: int) -> list[list[int]]:
    """For each gold column, the predicted columns holding the same multiset of values."""
    gold_bags = [Counter(row[i] for row in gold) for i in range(width)]
    predicted_bags = [Counter(row[j] for row in predicted) for j in range(width)]
    return [[j for j in range(width) if predicted_bags[j] == bag] for bag in gold_bags]


def _prefix_agrees(
    gold: list[Row], predicted: list[Row], chosen: list[int], order_matters: bool
) -> bool:
    """Whether the gold's first len(chosen) columns equal the chosen predicted columns, as
    multisets of partial rows (as lists when order matters): a necessary condition for the
    whole permutation, so a search can leave a branch as soon as it fails."""
    width = len(chosen)
    gold_part = [row[:width] for row in gold]
    predicted_part = [tuple(row[j] for j in chosen) for row in predicted]
    return _same_rows(gold_part, predicted_part, order_matters)


def _find_permutation(
    gold: list[Row], predicted: list[Row], candidates: list[list[int]], order_matters: bool
) -> bool:
    """Depth-first over assignments of a distinct predicted column to each gold column,
    pruned by `_prefix_agrees`; gives up (False) after MAX_STEPS partial assignments."""
    chosen: list[int] = []
    used: set[int] = set()
    steps = 0

    def walk(position: int) -> bool:
        nonlocal steps
        if position == len(candidates):
            return True
        for column in candidates[position]:
            if column in used:
                continue
            steps += 1
            if steps > MAX_STEPS:
                return False
            chosen.append(column)
            used.add(column)
            if _prefix_agrees(gold, predicted, chosen, order_matters) and walk(position + 1):
                return True
            chosen.pop()
            used.discard(column)
        return False

    return walk(0)


def _spider_equal(gold: list[Row], predicted: list[Row], order_matters: bool) -> bool:
    if not gold and not predicted:
        return True
    if len(gold) != len(predicted):
        return False
    width = len(gold[0])
    if any(len(row) != width for row in predicted) or any(len(row) != width for row in gold):
        return False
    # The identity first: most correct predictions keep the gold's column order.
    if _same_rows(gold, predicted, order_matters):
        return True
    candidates = _candidate_columns(gold, predicted, width)
    if any(not c for c in candidates):
        return False
    return _find_permutation(gold, predicted, candidates, order_matters)


def results_match(
    gold: Sequence[Sequence[Any]],
    predicted: Sequence[Sequence[Any]],
    *,
    order_matters: bool,
    convention: Convention = "spider",
    float_digits: int | None = None,
) -> bool:
    """Whether the predicted result counts as the gold one under `convention`."""
    gold_rows = normalise(gold, float_digits)
    predicted_rows = normalise(predicted, float_digits)
    if convention == "bird":
        return set(gold_rows) == set(predicted_rows)
    if convention == "multiset":
        return _same_rows(gold_rows, predicted_rows, order_matters)
    if convention == "spider":
        return _spider_equal(gold_rows, predicted_rows, order_matters)
    raise ValueError(f"unknown convention {convention!r}; one of {', '.join(CONVENTIONS)}")


def first_match(
    golds: Sequence[tuple[Sequence[Sequence[Any]], bool]],
    predicted: Sequence[Sequence[Any]],
    *,
    convention: Convention = "spider",
    float_digits: int | None = None,
) -> int | None:
    """The index of the first gold result (rows, order_matters) the prediction matches, or
    None: a question with several gold queries is answered by matching any of them."""
    for index, (rows, order_matters) in enumerate(golds):
        if results_match(
            rows,
            predicted,
            order_matters=order_matters,
            convention=convention,
            float_digits=float_digits,
        ):
            return index
    return None
