"""The JSON contracts as docs/json.md writes them, read back for the tests.

Two forms are documented: a section per pydantic model (`## ContextPack …`, `### TableChoice`)
with one table row per field, and, for plain documents, a line such as
"`index --json`: `{source, version, …}`" naming the top-level keys (`key?` when optional).
The tests compare real output with these, so the docs and the code cannot drift apart.
"""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "json.md"


def section_fields(name: str, text: str | None = None) -> set[str]:
    """The fields documented in the section headed `name` (up to the next heading)."""
    text = DOC.read_text() if text is None else text
    match = re.search(rf"^#+ {re.escape(name)}\b.*$", text, flags=re.MULTILINE)
    if match is None:
        raise AssertionError(f"docs/json.md has no section for {name}")
    rest = text[match.end() :]
    end = re.search(r"^#", rest, flags=re.MULTILINE)
    body = rest[: end.start()] if end else rest
    # Only the field table (headed `| field | …`), not a table of types or details beside it.
    fields: set[str] = set()
    in_field_table = False
    for line in body.splitlines():
        if line.startswith("| field |"):
            in_field_table = True
        elif not line.startswith("|"):
            in_field_table = False
        elif in_field_table and (found := re.match(r"\| `(\w+)` \|", line)):
            fields.add(found.group(1))
    return fields


def _top_level(braced: str) -> list[str]:
    """`{a, b: {c, d}, e?}` → ["a", "b", "e?"]."""
    inner, depth, parts, current = braced.strip()[1:-1], 0, [], ""
    for char in inner:
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    names = []
    for part in parts:
        found = re.match(r"\s*\"?([\w ]+?\??)\"?\s*(:|$)", part.strip())
        if found and found.group(1) not in ("…",):
            names.append(found.group(1).strip())
    return names


def document_keys(command: str, text: str | None = None) -> tuple[set[str], set[str]]:
    """(required, optional) top-level keys documented for "`command`: `{…}`"."""
    text = DOC.read_text() if text is None else text
    start = text.find(f"`{command}`: `{{")
    if start < 0:
        raise AssertionError(f"docs/json.md documents no JSON for `{command}`")
    opening = text.index("{", start)
    depth = 0
    for position in range(opening, len(text)):
        depth += {"{": 1, "}": -1}.get(text[position], 0)
        if depth == 0:
            break
    names = _top_level(text[opening : position + 1].replace("\n", " "))
    required = {n for n in names if not n.endswith("?")}
    optional = {n[:-1] for n in names if n.endswith("?")}
    return required, optional


def assert_matches(command: str, doc: dict[str, object]) -> None:
    """The document has every required key of its contract and no undocumented one."""
    required, optional = document_keys(command)
    keys = set(doc)
    assert required <= keys, f"`{command}` lacks documented keys: {required - keys}"
    assert keys <= required | optional, (
        f"`{command}` has undocumented keys: {keys - required - optional}"
    )
