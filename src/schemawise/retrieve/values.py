"""The values a context pack shows beside a column: the exact spelling of what the data holds
(`'Germany'`, not `'DE'`; `'2009-01-01 00:00:00'`, not `'2009/1/1'`) is what a query writer
gets wrong most often once the right column is found.

Values are shown where they change the SQL and cost few tokens: for a column holding a value
the question names (that value first, confirming its spelling), for an enum-like column (its
most common values: the codes a filter must use), and for a time column (the format). Names,
addresses and numbers show none, and the list never claims to be complete: profiles of SQLite
and DuckDB come from a bounded sample.
"""

from __future__ import annotations

import re

from schemawise.enrich.profile import ColumnProfile
from schemawise.graph.naming import type_family

VALUES_SHOWN = 3
VALUE_CHARS = 30  # longer values are cut: a value here is a hint of form, not the row

_NUMBER = re.compile(r"-?\d+(\.\d+)?")


def shown_values(profile: ColumnProfile | None, type_name: str, question: str) -> list[str]:
    """Up to VALUES_SHOWN values of a column with this profile, those the question names first."""
    if profile is None or type_family(type_name) in ("integer", "number", "boolean"):
        return []
    if profile.free_text:  # sentences are not a value's form: nothing to copy into a filter
        return []
    listed = [v for v in dict.fromkeys([*profile.samples, *profile.values, *profile.seen]) if v]
    if all(_NUMBER.fullmatch(v) for v in listed):  # numbers stored as text
        return []
    named = [v for v in listed if names_value(question, v)]
    if not (named or profile.values or type_family(type_name) == "temporal"):
        return []
    ordered = [*named, *(v for v in listed if v not in named)]
    return [_cut(v) for v in ordered[:VALUES_SHOWN]]


def names_value(question: str, value: str) -> bool:
    """The question writes the value out, as whole words, in any case."""
    if len(value) < 2 or value.isdigit() or value.lower() not in question.lower():
        return False
    return bool(re.search(rf"(?<!\w){re.escape(value)}(?!\w)", question, re.IGNORECASE))


def _cut(value: str) -> str:
    return value if len(value) <= VALUE_CHARS else value[: VALUE_CHARS - 1] + "…"


def render_values(values: list[str]) -> str:
    """`e.g. 'A', 'B'`, or '' for no values."""
    if not values:
        return ""
    return "e.g. " + ", ".join("'" + v.replace("'", "''") + "'" for v in values)
