"""The assistant's replies for people, in the terminal: SQL, the result as a table, the answer,
what was used and assumed, and what the checks found. Everything from a database or a model
is printed as plain text (terminal.plain): never markup, never escape sequences."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from schemawise.agent.assistant import Reply
from schemawise.terminal import plain

MAX_SHOWN_ROWS = 25


def result_table(columns: list[str], rows: list[list[Any]]) -> Table:
    table = Table(show_edge=False)
    for name in columns:
        table.add_column(plain(name))
    for row in rows[:MAX_SHOWN_ROWS]:
        table.add_row(*(plain("NULL" if v is None else v) for v in row))
    return table


def _problems(console: Console, label: str, style: str, problems: list[dict[str, Any]]) -> None:
    for problem in problems:
        console.print(Text.assemble((f"{label} ", style), (str(problem.get("type")), "bold"),
                                    ": ", plain(problem.get("message", ""))))  # fmt: skip
        if problem.get("hint"):
            console.print(Text.assemble("  hint: ", plain(problem["hint"])))


def print_sql(console: Console, sql: str | None) -> None:
    if sql:
        console.print(Syntax(sql, "sql", word_wrap=True, theme="ansi_dark"))
    else:
        console.print("(no SQL in this turn)")


def print_context(console: Console, reply: Reply) -> None:
    context = reply.context
    console.print(Text.assemble(("context ", "bold"), plain(str(reply.source)),
                                f" ({context.get('tokens', 0)} tokens)"))  # fmt: skip
    if context.get("text"):
        console.print(plain(context["text"]))


def print_reply(console: Console, reply: Reply, *, show_context: bool = False) -> None:
    if show_context or reply.status == "no_model":
        print_context(console, reply)
    if reply.status == "no_model":
        assert reply.failure is not None
        console.print(Text.assemble(("no model: ", "bold yellow"), plain(reply.failure.reason)))
        for assumption in reply.assumptions:
            console.print(Text.assemble(("assumed: ", "bold"), plain(assumption)))
        console.print(Text("Ready prompt (paste it into any model):", style="bold"))
        # soft_wrap: prompt text is copied as it is, never broken at the terminal's width
        console.print(plain(reply.prompt or ""), soft_wrap=True)
        return
    if reply.sql:
        print_sql(console, reply.sql)
    if reply.result is not None:
        if reply.result.rows:
            console.print(result_table(reply.result.columns, reply.result.rows))
        shown = min(reply.result.row_count, MAX_SHOWN_ROWS)
        more = f" (first {shown} shown)" if reply.result.row_count > shown else ""
        cut = " [yellow](truncated at the row cap)[/]" if reply.result.truncated else ""
        console.print(f"{reply.result.row_count:,} rows in {reply.result.elapsed_ms:,.0f} ms"
                      f"{more}{cut}", highlight=False)  # fmt: skip
    if reply.answer:
        console.print(Text.assemble(("answer: ", "bold green"), plain(reply.answer)))
    if reply.tables and reply.intent == "write_query":
        console.print(Text.assemble(("used: ", "bold"), plain(", ".join(reply.tables))))
    for assumption in reply.assumptions:
        console.print(Text.assemble(("assumed: ", "bold"), plain(assumption)))
    _problems(console, "warning", "yellow", reply.warnings)
    if reply.fixes:
        console.print(f"fixed {reply.fixes} time{'s' if reply.fixes > 1 else ''} after the checks",
                      highlight=False)  # fmt: skip
    if reply.status == "failed" and reply.failure is not None:
        failure = reply.failure
        console.print(Text.assemble(("no answer: ", "bold red"), plain(failure.reason)))
        if failure.last_error:
            _problems(console, "last error", "red", [failure.last_error])
        if failure.candidate_tables:
            console.print(Text.assemble("  candidate tables: ",
                                        plain(", ".join(failure.candidate_tables))))  # fmt: skip
        if failure.tried:
            tries = len(failure.tried)
            console.print(f"  tried {tries} quer{'ies' if tries > 1 else 'y'} (--json shows them)",
                          highlight=False)  # fmt: skip
    if reply.usage.get("calls"):
        usage = reply.usage
        console.print(
            f"[dim]{usage['calls']} model calls, {usage['input_tokens']:,} + "
            f"{usage['output_tokens']:,} tokens, {usage['seconds']:.1f} s[/]",
            highlight=False,
        )
