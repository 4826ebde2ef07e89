"""Text from a database, a query or a file name, made safe for a terminal.

Such text reaches people through rich, which reads `[…]` as markup (`[/x]` raised an error,
`[link=…]` planted a hyperlink) and passes escape sequences through (a value could set the
terminal's title or colours). `plain` returns a rich Text, never parsed as markup, with every
control character shown as its escape instead of sent.
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text

_KEEP = {"\n", "\t"}


def sanitize(value: object) -> str:
    """The value's text with control and formatting characters (ESC, BEL, bidi overrides)
    written as `\\x1b`-style escapes."""
    text = str(value)
    if text.isprintable() or all(c in _KEEP or c.isprintable() for c in text):
        return text
    return "".join(
        c
        if c in _KEEP or not unicodedata.category(c).startswith("C")
        else c.encode("unicode_escape").decode("ascii")
        for c in text
    )


def plain(value: object, style: str = "") -> Text:
    """A rich Text of the value: no markup, no control characters."""
    from rich.text import Text

    return Text(sanitize(value), style=style)


def assemble(*parts: str | tuple[str, str] | Text) -> Text:
    """rich's Text.assemble, imported on first use (rich costs start-up time)."""
    from rich.text import Text

    return Text.assemble(*parts)
