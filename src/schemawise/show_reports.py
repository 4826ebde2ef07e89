"""Reports for people: what `index`, `sync`, `rows …` and `bench …` print without `--json`.

Scripts get the JSON document (`--json`, documented in docs/json.md); people get the same
facts as sentences and tables. Anything that came from a database is printed as plain text
(terminal.plain): never markup, never escape sequences.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from schemawise.terminal import plain

# A list of records becomes a table when the records are this narrow; wider ones are listed.
MAX_TABLE_COLUMNS = 8


def number(value: object) -> str:
    """Counts with thousands separators; ratios and seconds with three decimals."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".") if value == value else "n/a"
    if value is None:
        return "—"
    return str(value)


def _scalar(value: object) -> bool:
    return not isinstance(value, Mapping | list | tuple)


def _records_table(rows: Sequence[Mapping[str, Any]]) -> Table | None:
    keys = list(dict.fromkeys(k for row in rows for k in row))
    if len(keys) > MAX_TABLE_COLUMNS or not all(_scalar(v) for r in rows for v in r.values()):
        return None
    table = Table(show_edge=False, pad_edge=False)
    for key in keys:
        table.add_column(plain(key.replace("_", " ")))
    for row in rows:
        table.add_row(*(plain(number(row.get(k))) for k in keys))
    return table


def print_document(console: Console, doc: Mapping[str, Any], indent: int = 0) -> None:
    """Any report as indented `name: value` lines; lists of narrow records as tables."""
    pad = "  " * indent
    for key, value in doc.items():
        label = key.replace("_", " ")
        if isinstance(value, Mapping):
            if not value:
                continue
            console.print(Text(f"{pad}{label}:", style="bold"))
            print_document(console, value, indent + 1)
        elif isinstance(value, list | tuple):
            if not value:
                console.print(plain(f"{pad}{label}: none"))
            elif all(_scalar(v) for v in value):
                console.print(plain(f"{pad}{label}: {', '.join(number(v) for v in value)}"))
            elif all(isinstance(v, Mapping) for v in value):
                console.print(Text(f"{pad}{label} ({len(value)}):", style="bold"))
                table = _records_table(value)
                if table is not None:
                    console.print(table)
                else:
                    for item in value:
                        print_document(console, item, indent + 1)
                        console.print()
        else:
            console.print(Text.assemble(f"{pad}{label}: ", plain(number(value))))


def print_index_report(console: Console, report: Mapping[str, Any], verb: str = "indexed") -> None:
    """One line per source: what was read, what was embedded, which version it is now."""
    since = report.get("previous_version")
    version = (
        f"version {report['version']}"
        + (f" (was {since})" if since and since != report["version"] else "")
        + (" (unchanged)" if since == report["version"] else "")
    )
    console.print(
        Text.assemble(
            (f"{verb} ", "bold green"),
            plain(report["source"], "bold"),
            f": {report['tables']:,} tables, {report['documents']:,} documents "
            f"({report['embedded']:,} embedded, {report['removed']:,} removed), {version}, "
            f"in {report['seconds']:.1f} s",
        )
    )
    problems = report.get("problems") or []
    shared = Counter(p["hint"] for p in problems if p.get("hint"))
    for problem in problems:
        where = f"{problem['table']}: " if problem.get("table") else ""
        stage = plain(f"{problem['stage']}: ", "bold")
        console.print(
            Text.assemble(("  warning ", "bold yellow"), stage, plain(where + problem["message"]))
        )
        if problem.get("hint") and shared[problem["hint"]] == 1:  # its own: beneath it
            console.print(Text.assemble("    hint: ", plain(problem["hint"])))
    for hint, count in shared.items():  # once each: ten typos share one hint
        if count > 1:
            console.print(Text.assemble("  hint: ", plain(hint)))


def print_rows_enabled(console: Console, report: Mapping[str, Any]) -> None:
    tenant = report.get("tenant_column")
    console.print(
        Text.assemble(
            ("searchable ", "bold green"),
            plain(report["table"], "bold"),
            f": text from {', '.join(report['text_columns'])}"
            + (f", per tenant ({tenant})" if tenant else "")
            + f"; model {report['model']} ({report['dim']} dimensions)",
        )
    )
    if report.get("changed_model"):
        console.print("  the model changed: every row is embedded again")
    console.print("  next: `schemawise rows backfill URL` embeds every row without a current "
                  "vector; `schemawise rows worker URL` keeps them embedded")  # fmt: skip
    if report.get("warning"):
        console.print(Text.assemble(("warning: ", "bold yellow"), plain(report["warning"])))


def print_backfill(console: Console, report: Mapping[str, Any]) -> None:
    console.print(
        Text.assemble(
            ("backfill done: ", "bold green"),
            f"{report['settled']:,} rows settled",
        )
    )
    rest = {k: v for k, v in report.items() if k != "settled"}
    print_document(console, rest, indent=1)


def _one_line(text: str | None, chars: int = 80) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= chars else flat[: chars - 1] + "…"


def print_search(console: Console, result: Mapping[str, Any]) -> None:
    rows = result.get("rows") or []
    if result.get("warning"):
        console.print(Text.assemble(("warning: ", "bold yellow"), plain(result["warning"])))
    if not rows:
        reason = result.get("empty_reason") or "no row is relevant"
        console.print(plain(f"no rows: {reason}"))
        return
    table = Table(show_edge=False)
    # The matched text columns after the key and score: what the row says, not only its key.
    texts = list(dict.fromkeys(c for row in rows for c in row.get("text", {})))
    keys = [k for k in dict.fromkeys(k for row in rows for k in row) if k != "text"]
    for key in [*keys[:2], *texts, *keys[2:]]:
        table.add_column(plain(key), overflow="fold" if key in texts else "ellipsis")
    for row in rows:
        said = row.get("text", {})
        values = [number(row.get(k)) for k in keys]
        shown = [*values[:2], *(_one_line(said.get(c)) for c in texts), *values[2:]]
        table.add_row(*(plain(v) for v in shown))
    console.print(table)
    console.print(plain(f"{len(rows)} row{'s' if len(rows) != 1 else ''} ({result['mode']})"))
