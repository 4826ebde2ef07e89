"""The answer in words: from the result's first rows, and only from them. A number the model
writes that the result (or the question) does not hold is caught here and the answer falls
back to a plain statement of the result."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from schemawise.errors import ModelCallError

ROWS_FOR_MODEL = 20
_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?![\w])")


@dataclass
class AnswerText:
    text: str
    source: str  # "model", "template", "empty"
    unsupported_numbers: list[str] = field(default_factory=list)


def numbers_in(text: str) -> list[str]:
    return _NUMBER.findall(text)


def _as_float(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def _known_numbers(rows: Sequence[Sequence[Any]], extra: Sequence[str]) -> list[float]:
    known: list[float] = []
    for row in rows:
        for value in row:
            if isinstance(value, bool) or value is None:
                continue
            if isinstance(value, int | float):
                known.append(float(value))
                continue
            known += [f for f in (_as_float(n) for n in numbers_in(str(value))) if f is not None]
    for text in extra:
        known += [f for f in (_as_float(n) for n in numbers_in(text)) if f is not None]
    return known


def _supported(number: float, known: Sequence[float]) -> bool:
    """Equal to a known value, or that value rounded to fewer places (12.3 for 12.345)."""
    for value in known:
        if math.isclose(number, value, rel_tol=1e-9, abs_tol=1e-9):
            return True
        for places in range(0, 4):
            if math.isclose(round(value, places), number, abs_tol=1e-9):
                return True
    return False


def unsupported_numbers(
    answer: str, rows: Sequence[Sequence[Any]], context: Sequence[str] = ()
) -> list[str]:
    """Numbers in the answer found neither in the result nor in the context (the question,
    the row count)."""
    known = _known_numbers(rows, context)
    return [
        n
        for n in numbers_in(answer)
        if (f := _as_float(n)) is not None and not _supported(f, known)
    ]


def template_answer(columns: Sequence[str], rows: Sequence[Sequence[Any]], total: int) -> str:
    """A plain statement of the result, used with no model or when the model's answer fails
    the number check."""
    if total == 0:
        return "No rows match: the query ran and its result is empty."
    if total == 1 and len(columns) == 1:
        return f"{columns[0]}: {rows[0][0]}"
    if total == 1:
        return "; ".join(f"{c}: {v}" for c, v in zip(columns, rows[0], strict=False))
    return f"{total} rows of {', '.join(columns)}."


def answer_in_words(
    llm: Any,
    question: str,
    sql: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    total: int,
    truncated: bool = False,
) -> AnswerText:
    if total == 0:
        return AnswerText(template_answer(columns, rows, total), "empty")
    if llm is None:
        return AnswerText(template_answer(columns, rows, total), "template")
    from schemawise.agent.prompts import ANSWER_INSTRUCTIONS, answer_prompt

    shown = rows[:ROWS_FOR_MODEL]
    try:
        prompt = answer_prompt(question, sql, columns, shown, total)
        text = str(llm.run("answer", ANSWER_INSTRUCTIONS, prompt)).strip()
    except ModelCallError:
        return AnswerText(template_answer(columns, rows, total), "template")
    context = [question, str(total), str(len(shown))]
    bad = unsupported_numbers(text, shown, context)
    if bad or not text:
        return AnswerText(template_answer(columns, rows, total), "template", bad)
    if truncated:
        text += f" (The result was cut at {total} rows.)"
    return AnswerText(text, "model")
