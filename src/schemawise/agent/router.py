"""The intent router: which agent a message goes to. Grammar decides the clear cases (pasted
SQL or a database error, "which table …", "what does … mean", "how are … related"); a
configured fast model decides the rest, and without one a message is a question for SQL."""

from __future__ import annotations

import re
from typing import Any, Literal

from schemawise.errors import ModelCallError

Intent = Literal["write_query", "find_tables", "fix_query", "explain_metadata"]
INTENTS: tuple[Intent, ...] = ("write_query", "find_tables", "fix_query", "explain_metadata")

_SQL = re.compile(r"\b(select\b.+\bfrom|with\s+\w+\s+as\s*\()\b", re.I | re.S)
_ERROR = re.compile(r"\b(error|exception|sqlstate|syntax error|does not exist|no such)\b", re.I)
_FIND = re.compile(
    r"\b(which|what|where|find|list)\b[^?]*\b(tables?|columns?|fields?|datasets?)\b"
    r"|\bwhere\s+(is|are|do|does|can)\b[^?]*\b(stored|kept|recorded|live)\b",
    re.I,
)
_META = re.compile(
    r"\bwhat\s+(does|do|is)\b[^?]*\b(mean|means|meaning|stand for)\b"
    r"|\bhow\s+(is|are|do|does)\b[^?]*\b(related|connected|joined|linked|join)\b"
    r"|\b(describe|explain)\s+(the\s+)?(table|column|field)\b",
    re.I,
)


def route_by_grammar(message: str) -> Intent | None:
    if _SQL.search(message):
        return "fix_query"
    if _META.search(message):
        return "explain_metadata"
    if _FIND.search(message):
        return "find_tables"
    if _ERROR.search(message) and len(message) < 400 and "\n" in message:
        return "fix_query"
    return None


def route(message: str, fast_llm: Any = None) -> Intent:
    """The intent of a message. A model is asked only when grammar says nothing."""
    by_grammar = route_by_grammar(message)
    if by_grammar is not None:
        return by_grammar
    if fast_llm is None:
        return "write_query"
    from schemawise.agent.prompts import ROUTER_INSTRUCTIONS

    try:
        reply = str(fast_llm.run("route", ROUTER_INSTRUCTIONS, message)).strip().lower()
    except ModelCallError:
        return "write_query"
    for intent in INTENTS:
        if intent in reply:
            return intent
    return "write_query"
