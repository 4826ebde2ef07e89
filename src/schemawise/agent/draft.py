"""What the query writer returns, and how its reply is read: a JSON object with the SQL, or
(from a small model that drifts from the format) a fenced SQL block or a bare SELECT."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, Field, ValidationError

_FENCED = re.compile(r"```(?:sql|json|postgres|sqlite)?\s*\n?(.*?)```", re.S | re.I)
_BARE = re.compile(r"^\s*(SELECT|WITH)\b.*", re.S | re.I)


class Draft(BaseModel):
    """The writer's structured output."""

    query: str
    assumptions: list[str] = Field(default_factory=list)
    explanation: str = ""
    tables: list[str] = Field(default_factory=list)
    columns: list[str] = Field(default_factory=list)


class UnreadableReplyError(ValueError):
    """The reply held no SQL; the message tells the model what to send instead."""


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [str(v) for v in value if str(v).strip()]
    return [str(value)]


def _from_object(data: dict[str, Any]) -> Draft | None:
    query = data.get("query") or data.get("sql") or data.get("SQL")
    if not isinstance(query, str) or not query.strip():
        return None
    try:
        return Draft(
            query=query.strip().rstrip(";").strip(),
            assumptions=_as_list(data.get("assumptions")),
            explanation=str(data.get("explanation") or ""),
            tables=_as_list(data.get("tables")),
            columns=_as_list(data.get("columns")),
        )
    except ValidationError:
        return None


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object in the text, outermost first (a model may wrap one in
    prose or a fence)."""
    found: list[dict[str, Any]] = []
    decoder = json.JSONDecoder()
    index = text.find("{")
    while index != -1:
        try:
            value, end = decoder.raw_decode(text, index)
        except json.JSONDecodeError:
            index = text.find("{", index + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        index = text.find("{", end)
    return found


def read_draft(text: str) -> Draft:
    """The draft in a reply, or UnreadableReplyError saying what was wrong."""
    for data in json_objects(text):
        draft = _from_object(data)
        if draft is not None:
            return draft
    for block in _FENCED.findall(text):
        block = block.strip()
        if block.startswith("{"):
            continue
        if _BARE.match(block):
            return Draft(query=block.rstrip(";").strip())
    if _BARE.match(text):
        return Draft(query=text.strip().rstrip(";").strip())
    raise UnreadableReplyError(
        'Reply with one JSON object: {"assumptions": [...], "query": "SELECT ...", '
        '"explanation": "...", "tables": [...], "columns": [...]}'
    )
