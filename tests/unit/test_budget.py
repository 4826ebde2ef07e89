"""The static check under the run's deadline: interrupted in any thread, and only when late."""

from __future__ import annotations

import threading
import time

import pytest

from schemawise.validate.budget import CheckTimeoutError, within
from schemawise.validate.safety import MAX_EXPRESSION_DEPTH, check_safety


def _spin(seconds: float) -> str:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass
    return "done"


def test_work_past_the_deadline_is_interrupted() -> None:
    started = time.monotonic()
    with pytest.raises(CheckTimeoutError):
        within(0.2, lambda: _spin(30))
    assert time.monotonic() - started < 5  # a safety bound: the spin would take 30 s


def test_work_in_another_thread_is_interrupted_too() -> None:
    outcome: list[str] = []

    def run() -> None:
        try:
            within(0.2, lambda: _spin(30))
        except CheckTimeoutError:
            outcome.append("interrupted")

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=10)
    assert outcome == ["interrupted"]


def test_work_in_time_returns_and_leaves_nothing_pending() -> None:
    for _ in range(200):
        assert within(0.05, lambda: "ok") == "ok"
    _spin(0.2)  # a stray interrupt would land here


def test_no_time_left_is_a_timeout_without_running() -> None:
    ran: list[int] = []
    with pytest.raises(CheckTimeoutError):
        within(0.0, lambda: ran.append(1))
    assert ran == []


@pytest.mark.parametrize("terms", [MAX_EXPRESSION_DEPTH, 5000])
def test_long_or_chains_are_refused_by_depth(terms: int) -> None:
    sql = "SELECT 1 FROM t WHERE " + " OR ".join(f"x = {i}" for i in range(terms))
    [problem] = check_safety(sql, "postgres").problems
    assert problem.type == "unsupported_query" and "IN (" in problem.hint


def test_an_in_list_of_the_same_values_passes() -> None:
    sql = "SELECT 1 FROM t WHERE x IN (" + ", ".join(str(i) for i in range(5000)) + ")"
    assert check_safety(sql, "postgres").ok
