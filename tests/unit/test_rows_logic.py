"""Pure pieces of row search: vector validation, backoff, F1 at a threshold, metrics,
sw_match spans, labels."""

from __future__ import annotations

import math

import numpy as np
import pytest

from schemawise.bench.rows import _recall_ndcg
from schemawise.index.embed import EmbeddingError, backoff_seconds, normalise, validate_vectors
from schemawise.rows.calibrate import Candidates, Label, best_threshold, f1_at
from schemawise.rows.inline import _arguments, _calls


@pytest.mark.parametrize(
    ("vectors", "count", "dim"),
    [
        (np.zeros((2, 4)), 3, 4),  # too few
        (np.zeros((3, 5)), 3, 4),  # wrong dimension
        (np.array([[0.0, math.nan], [1.0, 1.0]]), 2, 2),  # NaN
        (np.array([[0.0, math.inf], [1.0, 1.0]]), 2, 2),  # infinite
        (np.zeros(4), 1, 4),  # not a matrix
    ],
)
def test_malformed_answers_are_rejected(vectors: np.ndarray, count: int, dim: int) -> None:
    with pytest.raises(EmbeddingError):
        validate_vectors(vectors, count, dim)


def test_good_answers_pass_and_normalise() -> None:
    vectors = validate_vectors([[3.0, 4.0], [0.0, 0.0]], 2, 2)
    unit = normalise(vectors)
    assert np.allclose(unit[0], [0.6, 0.8]) and np.allclose(unit[1], [0.0, 0.0])


def test_backoff_grows_and_is_capped() -> None:
    delays = [backoff_seconds(a, base=1.0, cap=10.0, jitter=0.0) for a in range(1, 7)]
    assert delays == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]
    jittered = backoff_seconds(3, base=1.0, cap=10.0, jitter=0.5)
    assert 2.0 <= jittered <= 4.0


def _candidates(relevant: set[int], distances: list[float], lexical: list[bool]) -> Candidates:
    keys = list(range(len(distances)))
    return Candidates(Label("q", 1, frozenset(relevant)), keys, list(distances), lexical)


def test_f1_at_threshold() -> None:
    c = _candidates({0, 1}, [0.1, 0.2, 0.8, 0.9], [False] * 4)
    assert f1_at(c, 0.25, k=20) == 1.0
    assert f1_at(c, None, k=20) == pytest.approx(2 * 0.5 * 1.0 / 1.5)
    nothing = _candidates(set(), [0.7, 0.8], [False, False])
    assert f1_at(nothing, 0.5, k=20) == 1.0  # an empty answer to a query with no answer
    assert f1_at(nothing, None, k=20) == 0.0
    lexical = _candidates({1}, [0.9, 0.95], [False, True])
    assert f1_at(lexical, 0.5, k=20) == 1.0  # a term match survives the threshold


def test_gate_answers_nothing_when_even_the_nearest_row_is_far() -> None:
    far = _candidates(set(), [0.70, 0.72], [False, False])
    near = _candidates({0}, [0.30, 0.75], [False, False])
    assert f1_at(far, 0.8, k=20, gate=0.6) == 1.0  # closed: nothing comes back
    assert f1_at(near, 0.8, k=20, gate=0.6) == pytest.approx(2 * 0.5 / 1.5)  # open, both rows


def test_best_threshold_separates_relevant_from_not() -> None:
    found = [
        _candidates({0, 1}, [0.10, 0.20, 0.60, 0.70], [False] * 4),
        _candidates(set(), [0.55, 0.65], [False, False]),
    ]
    threshold, gate, f1 = best_threshold(found, k=20)
    assert 0.1 <= gate < 0.55 and 0.2 <= threshold < 0.6 and gate <= threshold and f1 == 1.0


def test_recall_and_ndcg() -> None:
    assert _recall_ndcg([1, 2, 3], frozenset({1, 2, 3}), k=3) == (1.0, 1.0)
    recall, ndcg = _recall_ndcg([9, 1], frozenset({1}), k=2)
    assert recall == 1.0 and ndcg == pytest.approx(1 / math.log2(3))
    assert _recall_ndcg([], frozenset({1}), k=2) == (0.0, 0.0)


def test_sw_match_spans_and_arguments() -> None:
    sql = "SELECT a.x FROM t a WHERE a.y = 1 AND sw_match('a', 'heart (cardiology)', 5) AND z"
    [(start, end)] = _calls(sql)
    assert sql[start:end] == "sw_match('a', 'heart (cardiology)', 5)"
    assert _arguments(sql[start:end]) == ("a", "heart (cardiology)", 5)
    assert _calls("SELECT 'sw_match(' FROM t") == []  # inside a string: not a call
    with pytest.raises(Exception, match="literal"):
        _arguments("sw_match(a.col, 'x')")


def test_sw_match_spans_nest_and_skip_other_calls() -> None:
    sql = "SELECT 1 WHERE sw_match('t', 'a (b)') AND lower(x) = 'y' AND sw_match('u', 'c')"
    spans = _calls(sql)
    assert [sql[a:b] for a, b in spans] == ["sw_match('t', 'a (b)')", "sw_match('u', 'c')"]


def test_too_many_sw_match_calls_are_refused_before_any_work() -> None:
    """The attack: 1,000 calls in 26 KB kept the old quadratic rewrite busy past 120 s. The
    scan is one pass over the tokens, and the cap refuses them before any search is built."""
    import time

    from schemawise.errors import SchemawiseError
    from schemawise.rows.inline import MAX_CALLS

    sql = "SELECT 1 WHERE " + " OR ".join(["sw_match('t', 'x')"] * 1000)
    started = time.monotonic()
    with pytest.raises(SchemawiseError, match=f"at most {MAX_CALLS}"):
        _calls(sql)
    assert time.monotonic() - started < 10  # a safety bound, far above the expected time


@pytest.mark.parametrize(
    ("text", "escaped"),
    [("a LIKE 'x%'", "a LIKE 'x%%'"), ("n % 2 = 0", "n %% 2 = 0"), ("plain", "plain")],
)
def test_the_callers_percent_signs_survive_bound_parameters(text: str, escaped: str) -> None:
    from schemawise.rows.inline import _escape_percent

    assert _escape_percent(text) == escaped


@pytest.mark.parametrize("k", ["1.5", "1e3", "'abc'", "0", "-3", "99999999999999999999"])
def test_a_bad_k_is_a_refusal_with_a_hint_not_a_traceback(k: str) -> None:
    from schemawise.errors import SchemawiseError

    with pytest.raises(SchemawiseError, match=r"whole number|literal arguments"):
        _arguments(f"sw_match('t', 'x', {k})")


def test_a_good_k_is_read() -> None:
    assert _arguments("sw_match('t', 'x', 50)") == ("t", "x", 50)
