"""Reports for people: numbers written for reading, nested documents as indented lines and
tables, database text never taken as markup."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from schemawise.show_reports import number, print_document, print_index_report


@pytest.mark.parametrize(
    ("value", "shown"),
    [(1234567, "1,234,567"), (0.98765, "0.988"), (2.0, "2"), (True, "yes"), (None, "—"),
     (float("nan"), "n/a"), ("text", "text")],
)  # fmt: skip
def test_numbers_are_written_for_reading(value: object, shown: str) -> None:
    assert number(value) == shown


def render(doc: dict[str, object]) -> str:
    console = Console(width=100, record=True, color_system=None)
    print_document(console, doc)
    return console.export_text()


def test_a_nested_report_reads_as_indented_lines_and_tables() -> None:
    text = render({
        "benchmark": "linking",
        "schemawise": {"strict_table_recall": 0.9912, "latency_seconds": {"p50": 0.02}},
        "per_database": [{"database": "a", "recall": 1.0}, {"database": "b", "recall": 0.5}],
        "skipped": [],
    })  # fmt: skip
    lines = text.splitlines()
    assert "benchmark: linking" in lines
    assert "  strict table recall: 0.991" in lines
    assert "    p50: 0.02" in lines
    assert "skipped: none" in lines
    assert any(line.replace("│", " ").split() == ["a", "1"] for line in lines)  # a table row
    with pytest.raises(ValueError):
        json.loads(text)


def test_database_text_is_never_markup() -> None:
    text = render({"table": "[bold]x[/bold]", "rows": [{"key": "[red]k"}]})
    assert "[bold]x[/bold]" in text and "[red]k" in text


def test_an_index_report_says_what_changed() -> None:
    console = Console(width=200, record=True, color_system=None)
    print_index_report(console, {"source": "shop", "version": "b", "previous_version": "a",
                                 "tables": 9, "documents": 120, "embedded": 3, "removed": 1,
                                 "seconds": 2.345})  # fmt: skip
    assert console.export_text().strip() == (
        "indexed shop: 9 tables, 120 documents (3 embedded, 1 removed), version b (was a), in 2.3 s"
    )


def test_an_index_report_prints_each_problem_with_its_hint() -> None:
    console = Console(width=200, record=True, color_system=None)
    problem = {"stage": "overlay", "table": None, "hint": "Write each side as table.column.",
               "message": "the overlay's stated join lines.order_idd → orders.order_id was left "
                          "out: no column lines.order_idd"}  # fmt: skip
    timeout = {"stage": "data_check", "table": "lines", "hint": "", "message": "timeout: …"}
    problems = [problem, problem, timeout]
    print_index_report(console, {"source": "shop", "version": "b", "previous_version": None,
                                 "tables": 2, "documents": 9, "embedded": 9, "removed": 0,
                                 "seconds": 1.0, "problems": problems})  # fmt: skip
    lines = console.export_text().splitlines()
    assert lines[1] == lines[2] == f"  warning overlay: {problem['message']}"
    assert lines[3] == "  warning data_check: lines: timeout: …"  # the table it is about
    assert lines[4:] == ["  hint: Write each side as table.column."]  # each hint once


def test_a_hint_of_its_own_is_printed_beneath_its_warning() -> None:
    console = Console(width=200, record=True, color_system=None)
    problems = [
        {"stage": "overlay", "table": None, "message": f"table {name} unknown",
         "hint": f"Did you mean {name}s?"}
        for name in ("plan", "payment")
    ]  # fmt: skip
    print_index_report(console, {"source": "shop", "version": "b", "previous_version": None,
                                 "tables": 2, "documents": 9, "embedded": 9, "removed": 0,
                                 "seconds": 1.0, "problems": problems})  # fmt: skip
    assert console.export_text().splitlines()[1:] == [
        "  warning overlay: table plan unknown",
        "    hint: Did you mean plans?",
        "  warning overlay: table payment unknown",
        "    hint: Did you mean payments?",
    ]
