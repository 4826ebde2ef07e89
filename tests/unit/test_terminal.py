"""Text from a database reaches a terminal as text: no markup, no escape sequences."""

from __future__ import annotations

import pytest
from rich.console import Console

from schemawise.cli import tenant_value
from schemawise.terminal import plain, sanitize


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("\x1b]0;PWNED\x07", "\\x1b]0;PWNED\\x07"),
        ("\x1b[31mred", "\\x1b[31mred"),
        ("a\u202eb", "a\\u202eb"),  # a bidi override
        ("two\nlines\tand tab", "two\nlines\tand tab"),
        (
            "[/x] [link=http://evil.example]click[/link]",
            "[/x] [link=http://evil.example]click[/link]",
        ),
        (None, "None"),
    ],
)
def test_control_characters_are_shown_not_sent(value: object, shown: str) -> None:
    assert sanitize(value) == shown


def test_markup_in_a_value_is_printed_as_written() -> None:
    console = Console(width=200, record=True, force_terminal=True)
    console.print(plain("[/x] [bold]not bold[/bold] [link=http://evil.example]x[/link]"))
    text = console.export_text()
    assert "[/x] [bold]not bold[/bold] [link=http://evil.example]x[/link]" in text
    assert "\x1b]8;" not in console.export_text(styles=True)  # no hyperlink planted


@pytest.mark.parametrize(
    ("typed", "tenant"),
    [("7", 7), ("0", 0), ("01", "01"), ("²", "²"), ("١", "١"), ("acme", "acme"), (None, None)],
)
def test_a_tenant_is_a_number_only_when_typed_as_one(typed: str | None, tenant: object) -> None:
    assert tenant_value(typed) == tenant
