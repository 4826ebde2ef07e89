"""The `schemawise` command: parse, call the library, render for people or print JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import typer

from schemawise import __version__
from schemawise.cli_support import JsonErrorsGroup, err, handle_errors, out, real_console
from schemawise.errors import SchemawiseError
from schemawise.terminal import assemble, plain

app = typer.Typer(
    help="Ask questions of real databases and get checked answers.\n\n"
    "The schema graph and its join paths (graph, path); context packs for a question (index, "
    "sync, sources, context); SQL checked against the graph and run inside guards (check, run, "
    "doctor); search over row contents (rows); the assistant that writes, checks, fixes and runs "
    "the SQL and states the answer (ask, chat, serve --mcp), and its evaluation (eval, "
    "failures); the embedded PostgreSQL (db) and an optional local model (model).\n\n"
    "\b\nQuick start:\n"
    "  schemawise demo\n"
    "  schemawise index embedded --name shop\n"
    '  schemawise context "net revenue per region" --source shop\n'
    '  schemawise run embedded --sql "SELECT count(*) FROM shop.orders"',
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    cls=JsonErrorsGroup,
)
db_app = typer.Typer(
    help="Manage the embedded PostgreSQL that holds the demo.", no_args_is_help=True
)
bench_app = typer.Typer(
    help="Benchmarks: a readable report, or one JSON document with --json.", no_args_is_help=True
)
app.add_typer(db_app, name="db")
app.add_typer(bench_app, name="bench")


F = TypeVar("F", bound=Callable[..., Any])

UrlArg = Annotated[
    str,
    typer.Argument(
        help="postgresql://…, sqlite:///path, duckdb:///path, or 'embedded' (the demo database)."
    ),
]
PgUrlArg = Annotated[
    str,
    typer.Argument(
        help="postgresql://… (with pgvector), or 'embedded' / 'embedded/<db>' (the embedded "
        "server); row search needs PostgreSQL.",
        metavar="URL",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]
# `eval` and `bench linking` read the same golden sets, on the same databases.
GoldenOpt = Annotated[Path | None, typer.Option("--golden", help="A golden set (YAML or JSONL).")]
GoldenDataOpt = Annotated[
    str | None,
    typer.Option(
        "--data",
        help="The dataset folder; for golden, the database of items that name none (a path or "
        "URL; eval runs SQL on SQLite and DuckDB files only).",
    ),
]
QueryLogOpt = Annotated[
    Path | None,
    typer.Option(
        "--query-log",
        help="JSONL query log (user, timestamp, sql), or 'pg_stat_statements' to read the "
        "Postgres source's statement statistics.",
    ),
]
OverlayJoinsOpt = Annotated[
    Path | None,
    typer.Option(
        "--overlay",
        help="schemawise.yml overlay file: its `joins:` and `not_joins:` applied as `index` "
        "applies them (a dbt project's relationships are not read here).",
    ),
]
NoDataOpt = Annotated[
    bool, typer.Option("--no-data-checks", help="Structure only: no queries on table data.")
]
BudgetOpt = Annotated[
    float, typer.Option("--budget", help="Seconds allowed for all data checks together.")
]
SchemaOpt = Annotated[
    list[str] | None, typer.Option("--schema", help="Postgres schema to read (repeatable).")
]


@contextmanager
def progress(enabled: bool) -> Iterator[Callable[[str], None]]:
    """A status line on stderr for long work; silent when stderr is not a terminal."""
    if not enabled or not sys.stderr.isatty():
        yield lambda _: None
        return
    with err.status("working…") as status:
        yield lambda message: status.update(message)


def _print_benchmark(
    compute: Callable[[Callable[[str], None]], dict[str, Any]], as_json: bool
) -> None:
    """Run a benchmark with a status line on stderr; print its report, or its JSON document."""
    with progress(True) as say:
        report = compute(say)
    _emit(report, as_json)


def _load_graph(
    url: str,
    query_log: Path | None,
    no_data_checks: bool,
    budget: float,
    schemas: list[str] | None,
    say: Callable[[str], None],
    overlay: Path | None = None,
) -> Any:
    from schemawise.db import connect
    from schemawise.enrich.apply import apply_overlay_joins, overlay_checker
    from schemawise.enrich.metadata import from_overlay
    from schemawise.enrich.querylog import read_log
    from schemawise.graph.extract import ExtractOptions, extract_graph

    meta = from_overlay(overlay) if overlay else None  # a mistake fails before the database
    with connect(url, schemas=schemas) as source:
        log = read_log(query_log, source) if query_log else None
        options = ExtractOptions(
            data_checks=not no_data_checks, query_log=log, budget_seconds=budget
        )
        graph = extract_graph(source, options, progress=say)
        if meta is not None:
            checker = None if no_data_checks else overlay_checker(source, budget)
            apply_overlay_joins(graph, meta, checker)
        return graph


@app.command(short_help="The schema graph: tables, keys, joins with verified cardinality.")
@handle_errors
def graph(
    url: UrlArg,
    as_json: JsonOpt = False,
    query_log: QueryLogOpt = None,
    no_data_checks: NoDataOpt = False,
    budget: BudgetOpt = 60.0,
    schema: SchemaOpt = None,
    overlay: OverlayJoinsOpt = None,
) -> None:
    """Extract the schema graph: tables, keys, and edges with verified cardinality.

    \b
    Examples:
      schemawise graph embedded
      schemawise graph sqlite:///chinook.db --json > graph.json
      schemawise graph sqlite:///flights.db --overlay schemawise.yml   # its joins, before index
    """
    from schemawise.graph.render import graph_tables

    with progress(not as_json) as say:
        result = _load_graph(url, query_log, no_data_checks, budget, schema, say, overlay)
    if as_json:
        print(result.to_json())
    else:
        out.print(graph_tables(result))


@app.command(short_help="The cheapest join path between tables, with grain and warnings.")
@handle_errors
def path(
    url: UrlArg,
    tables: Annotated[list[str], typer.Argument(help="Two or more tables to connect.")],
    as_json: JsonOpt = False,
    query_log: QueryLogOpt = None,
    no_data_checks: NoDataOpt = False,
    budget: BudgetOpt = 60.0,
    schema: SchemaOpt = None,
    overlay: OverlayJoinsOpt = None,
) -> None:
    """The cheapest join path connecting tables, with its grain and fan-out warnings.

    \b
    Examples:
      schemawise path embedded shop.order_items shop.regions
    """
    from schemawise.graph.paths import connecting_tree
    from schemawise.graph.render import join_path_text

    if len(tables) < 2:
        raise SchemawiseError("`path` needs at least two tables.", "e.g. path URL orders regions")
    with progress(not as_json) as say:
        result = _load_graph(url, query_log, no_data_checks, budget, schema, say, overlay)
    joined = connecting_tree(result, tables)
    if as_json:
        print(joined.model_dump_json(indent=2))
    else:
        out.print(join_path_text(joined))


@app.command(short_help="Build the demo warehouse and show what schemawise sees.")
@handle_errors
def demo(
    as_json: JsonOpt = False,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Where to write the dbt project and query log.")
    ] = None,
    no_recruiting: Annotated[
        bool,
        typer.Option("--no-recruiting", help="Skip the 200,000-row recruiting schema."),
    ] = False,
) -> None:
    """Build the demo warehouse in the embedded Postgres and show what schemawise sees.

    \b
    Examples:
      schemawise demo
      schemawise demo --no-recruiting   # the shop only, in seconds
    """
    from schemawise.demo.run import run_demo

    with progress(not as_json) as say:
        report = run_demo(out_dir, say, recruiting=not no_recruiting)
    if as_json:
        print(json.dumps(report.to_dict(), indent=2, default=str))
    else:
        report.render(out)


SqlOpt = Annotated[str | None, typer.Option("--sql", help="The SQL statement.")]
FileOpt = Annotated[Path | None, typer.Option("--file", help="A file holding the SQL statement.")]
Fanout = Literal["error", "warn", "auto"]
FanoutOpt = Annotated[
    Fanout,
    typer.Option(
        "--fanout",
        help="What a fan-out risk is: error, warn, or auto (a SUM or AVG that a join "
        "multiplies is an error, other risks warn).",
    ),
]
RulesOpt = Annotated[Path | None, typer.Option("--rules", help="YAML file of business rules.")]


def _read_sql(sql: str | None, file: Path | None) -> str:
    if (sql is None) == (file is None):
        raise SchemawiseError(
            "Give the SQL with exactly one of --sql or --file.", "e.g. --sql 'SELECT 1'"
        )
    if file is not None:
        if not file.is_file():
            raise SchemawiseError(f"No such file: {file}", "Check the path given to --file.")
        try:
            return file.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise SchemawiseError(
                f"{file} is not UTF-8 text (byte {exc.start}).",
                "Save the SQL file as UTF-8.",
            ) from exc
    assert sql is not None
    return sql


def _known_dialect(name: str) -> None:
    from sqlglot.dialects.dialect import Dialect, Dialects

    try:
        Dialect.get_or_raise(name)
    except ValueError:
        known = ", ".join(sorted(d.value for d in Dialects if d.value))
        raise SchemawiseError(f"Unknown SQL dialect {name!r}.", f"Use one of: {known}.") from None


def tenant_value(text: str | None) -> Any:
    """A tenant as typed: a plain decimal number (ASCII digits, no leading zero) is an int,
    anything else stays text, so that "01", "²" or "١" never become tenant 1."""
    if text is None:
        return None
    plain_number = text.isascii() and text.isdigit() and (text == "0" or text[0] != "0")
    return int(text) if plain_number else text


def _say_graph_origin(origin: str) -> None:
    said = {
        "index": "schema graph: the indexed one (the catalogue has not changed since `index`)",
        "extracted": "schema graph: read from the database now (not indexed, or changed since)",
    }
    if origin in said:
        err.print(f"[dim]{said[origin]}[/]", highlight=False)


def _print_problems(result: dict[str, Any]) -> None:
    for kind, style in (("errors", "bold red"), ("warnings", "bold yellow")):
        for problem in result.get(kind, []):
            out.print(assemble((str(problem["type"]), style), ": ", plain(problem["message"])))
            if problem.get("hint"):
                out.print(assemble("  hint: ", plain(problem["hint"])))


@app.command(short_help="Check one SQL statement against the schema graph.")
@handle_errors
def check(
    url: UrlArg,
    sql: SqlOpt = None,
    file: FileOpt = None,
    dialect: Annotated[
        str | None, typer.Option("--dialect", help="SQL dialect (default: the database's).")
    ] = None,
    fanout: FanoutOpt = "warn",
    rules: RulesOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Check one SQL statement against the schema graph; exit 1 when problems are found.

    \b
    Examples:
      schemawise check embedded --sql "SELECT count(*) FROM shop.orders"
      schemawise check sqlite:///chinook.db --file query.sql --json
    """
    from schemawise.graph.reuse import graph_for
    from schemawise.validate.check import check_sql
    from schemawise.validate.rules import load_rules

    text = _read_sql(sql, file)
    if dialect is not None:
        _known_dialect(dialect)
    loaded = load_rules(rules) if rules else None
    with progress(not as_json) as say:
        say("reading the schema graph")
        choice = graph_for(url)
    result = check_sql(text, choice.graph, dialect=dialect, fanout=fanout, rules=loaded)
    doc = result.model_dump()
    doc["graph_origin"] = choice.origin
    if as_json:
        print(json.dumps(doc, indent=2, default=str))
    else:
        _say_graph_origin(choice.origin)
        _print_problems(doc)
        if result.ok:
            out.print("[bold green]ok[/]" + (" (with warnings)" if result.warnings else ""))
    raise typer.Exit(0 if result.ok else 1)


@app.command(short_help="Check, EXPLAIN-gate and run one query inside the guards.")
@handle_errors
def run(
    url: UrlArg,
    sql: SqlOpt = None,
    file: FileOpt = None,
    max_rows: Annotated[int, typer.Option("--max-rows", help="Rows returned at most.")] = 1000,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds allowed.")] = 10.0,
    fanout: FanoutOpt = "auto",
    rules: RulesOpt = None,
    tenant: Annotated[
        str | None,
        typer.Option(
            "--tenant",
            help="The caller's tenant: the run logs in as its role (embedded) and sw_match(…) "
            "and row security see its rows only.",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Check, EXPLAIN-gate and run one query inside every guard; errors come back classified.

    \b
    Examples:
      schemawise run embedded --sql "SELECT status, count(*) FROM shop.orders GROUP BY status"
      schemawise run embedded --tenant 7 --file query.sql --max-rows 50
    """
    from schemawise.db.guard import Limits
    from schemawise.runner import run_checked
    from schemawise.validate.rules import load_rules

    text = _read_sql(sql, file)
    if max_rows < 1 or timeout <= 0:
        raise SchemawiseError("--max-rows and --timeout must be positive.", "e.g. --max-rows 100")
    loaded = load_rules(rules) if rules else None
    with progress(not as_json) as say:
        say("checking and running")
        outcome = run_checked(
            url,
            text,
            limits=Limits(max_rows=max_rows, timeout_seconds=timeout),
            fanout=fanout,
            rules=loaded,
            tenant=tenant_value(tenant),
        )
    doc = outcome.to_dict()
    if as_json:
        print(json.dumps(doc, indent=2, default=str))
    else:
        _say_graph_origin(outcome.graph_origin)
        _print_problems(doc)
        if outcome.error:
            _print_problems({"errors": [doc["error"]]})
        if outcome.result is None and outcome.error is None:  # the check or the EXPLAIN gate
            multiplied = any(p.get("type") == "fanout_risk" for p in doc.get("errors", []))
            err.print(plain("refused: the query was not run" + (
                " (`--fanout warn` lets a fan-out through, with its warning)" if multiplied else ""
            ), "bold red"))  # fmt: skip
        if outcome.result is not None:
            from rich.table import Table as RichTable

            result = outcome.result
            if result.rows:
                # Values and column names are the database's: never markup, never escapes.
                table = RichTable()
                for name in result.columns:
                    table.add_column(plain(name))
                for row in result.rows:
                    table.add_row(*(plain("NULL" if v is None else v) for v in row))
                out.print(table)
            count = len(result.rows)
            summary = f"{count:,} row{'s' if count != 1 else ''} in {result.elapsed_ms:,.0f} ms"
            if result.truncated:
                summary += f" [yellow](truncated: {result.truncated_reason})[/]"
            out.print(summary, highlight=False)
    raise typer.Exit(0 if outcome.ok else 1)


@app.command(short_help="Check the role SQL would run as, and how to fix it.")
@handle_errors
def doctor(url: UrlArg, as_json: JsonOpt = False) -> None:
    """Check the role schemawise would run SQL as: superuser, dangerous memberships, timeouts.

    \b
    Examples:
      schemawise doctor embedded
      schemawise doctor postgresql://reader@db.internal/warehouse
    """
    from schemawise.db.urls import parse_url

    parsed = parse_url(url)
    if parsed.kind in ("sqlite", "duckdb"):
        findings = [
            {
                "severity": "ok",
                "check": "file",
                "message": f"{parsed.kind} files are opened read-only with schemawise's guards.",
                "fix": "",
            }
        ]
    else:
        from schemawise.db.roles import inspect_role

        target = parsed.target
        if parsed.kind == "embedded":
            from schemawise.db.embedded import admin_url
            from schemawise.db.roles import ensure_reader_role

            target = ensure_reader_role(admin_url(parsed.target))
        findings = [f.__dict__ for f in inspect_role(target)]
    if as_json:
        print(json.dumps({"findings": findings}, indent=2))
    else:
        _print_findings(findings)
    raise typer.Exit(1 if any(f["severity"] == "danger" for f in findings) else 0)


# More missing revocations than this are said as one finding with one script to run (a
# standard Postgres has dozens); --json keeps one finding each.
_REVOCATIONS_LISTED = 3


def _print_findings(findings: list[dict[str, Any]]) -> None:
    revocations = [f for f in findings if f["check"] == "revocation"]
    grouped = len(revocations) > _REVOCATIONS_LISTED
    for f in findings:
        if grouped and f["check"] == "revocation":
            continue
        style = {"danger": "bold red", "warning": "yellow", "ok": "green"}[f["severity"]]
        out.print(assemble((f["severity"], style), f" {f['check']}: ", plain(f["message"])))
        if f["fix"]:
            out.print(assemble("  fix: ", plain(f["fix"])))
    if grouped:
        # Each function by its name alone: the summary is a line, the script below is exact.
        names = list(dict.fromkeys(
            f["message"].removeprefix("PUBLIC may execute ").split("(", 1)[0]
            for f in revocations
        ))  # fmt: skip
        said = (
            f" revocation: PUBLIC may execute {len(revocations)} functions model SQL must "
            f"not reach ({', '.join(names[:4])}, …; each with its reason in --json)"
        )
        out.print(assemble(("warning", "yellow"), plain(said)))
        out.print(plain("  fix, as each function's owner (GRANT back to roles that need one):"))
        for f in revocations:
            out.print(plain(f"    {f['fix'].split(' -- ', 1)[0]}"))


IndexUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--index-url", help="Postgres (with pgvector) holding the index; default embedded."
    ),
]


def _index_url(index_url: str | None) -> str:
    from schemawise.api import index_url_or_embedded

    return index_url_or_embedded(index_url)


@app.command("index", short_help="Index a database's schema for context packs.")
@handle_errors
def index_command(
    url: UrlArg,
    name: Annotated[
        str | None,
        typer.Option(
            "--name",
            help="Name of this source (default: the database name, or the file name without "
            "its extension). Indexing again under a name replaces what it held.",
        ),
    ] = None,
    dictionary: Annotated[
        Path | None, typer.Option("--dictionary", help="BIRD-style database_description folder.")
    ] = None,
    query_log: QueryLogOpt = None,
    dbt: Annotated[
        Path | None, typer.Option("--dbt", help="dbt project folder or manifest.json.")
    ] = None,
    overlay: Annotated[
        Path | None, typer.Option("--overlay", help="schemawise.yml overlay file.")
    ] = None,
    no_profile: Annotated[
        bool, typer.Option("--no-profile", help="Do not sample the data for profiles.")
    ] = False,
    describe: Annotated[
        bool,
        typer.Option(
            "--describe",
            help="The configured model describes each table nothing else describes, with the "
            "words people use for it (one call a table; kept, and reused by sync).",
        ),
    ] = False,
    index_url: IndexUrlOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Index a database's schema (cards, columns, join paths, examples) for `context`.

    \b
    Examples:
      schemawise index embedded --name shop
      schemawise index postgresql://reader@host/dw --dbt ./analytics --query-log pg_stat_statements
    """
    from schemawise import api

    with progress(not as_json) as say:
        report = api.index(
            url, name, dictionary=dictionary, query_log=query_log, dbt=dbt, overlay=overlay,
            profile=not no_profile, describe=describe, index_url=index_url, progress=say,
        )  # fmt: skip
    if as_json:
        print(json.dumps(report.to_dict(), indent=2, default=str))
    else:
        from schemawise.show_reports import print_index_report

        print_index_report(out, report.to_dict())


@app.command(short_help="Re-index sources whose schema changed.")
@handle_errors
def sync(
    source: Annotated[str | None, typer.Argument(help="One source (default: all).")] = None,
    url: Annotated[
        str | None,
        typer.Option(
            "--url",
            help="The full database URL: the index keeps none of its password, which is otherwise "
            "taken from PGPASSWORD or ~/.pgpass.",
        ),
    ] = None,
    index_url: IndexUrlOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Re-extract indexed sources; re-embed only the documents that changed; bump versions.

    \b
    Examples:
      schemawise sync
      schemawise sync shop --json
    """
    from schemawise.index.connection import connect_index
    from schemawise.index.sources import list_sources

    target = _index_url(index_url)
    with connect_index(target) as conn:
        known = list_sources(conn)
    chosen = [s for s in known if source in (None, s["source"])]
    if not chosen:
        raise SchemawiseError(
            f"No indexed source {source!r}." if source else "Nothing is indexed yet.",
            "Run `schemawise index URL` first (`schemawise sources` lists what is indexed).",
        )
    reports, failed = [], []
    for entry in chosen:
        try:
            reports.append(_sync_one(target, entry, url, as_json))
        except SchemawiseError as exc:
            if source is not None:  # the one source asked for: its error is the answer
                raise
            # Syncing everything: one unreachable database does not stop the others.
            failed.append({"source": entry["source"], "error": exc.to_dict()})
    if as_json:
        print(json.dumps({"synced": reports, "failed": failed}, indent=2, default=str))
    else:
        from schemawise.show_reports import print_index_report

        for report_doc in reports:
            print_index_report(out, report_doc, verb="synced")
        for failure in failed:
            err.print(assemble(("not synced ", "bold red"), plain(failure["source"], "bold"),
                               ": ", plain(failure["error"]["message"])))  # fmt: skip
            if failure["error"].get("hint"):
                err.print(assemble("  hint: ", plain(failure["error"]["hint"])))
    if failed:
        raise typer.Exit(2)


def _sync_one(target: str, entry: dict[str, Any], url: str | None, quiet: bool) -> Any:
    from schemawise.db.urls import without_redacted_password
    from schemawise.index.sources import index_source, stored_options

    # The index stores URLs without their passwords: libpq then takes the password from
    # PGPASSWORD or ~/.pgpass (a failed login says so), or --url gives the full URL.
    where = url or without_redacted_password(entry["url"])
    # Kept as stored (`user:***@host`), not as connected to (`user@host`): `check` and `run`
    # find the indexed graph by the URL the user gives, password or not.
    stored_as = None if url else entry["url"]
    # The same dbt project, overlay, dictionary and log as when it was indexed.
    with progress(not quiet) as say:
        say(f"syncing {entry['source']}")
        report = index_source(target, where, entry["source"], progress=say,
                              stored_as=stored_as, **stored_options(entry))  # fmt: skip
    return report.to_dict()


@app.command(short_help="Indexed sources with their versions and sizes.")
@handle_errors
def sources(
    remove: Annotated[
        list[str] | None,
        typer.Option(
            "--remove",
            help="Take this source out of the index (repeat for several); "
            "the database itself is not touched.",
        ),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Also connect to each database and say whether its tables, columns and "
            "declared keys are still as indexed.",
        ),
    ] = False,
    index_url: IndexUrlOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Indexed sources with their versions and sizes, or take some out of the index.

    \b
    Examples:
      schemawise sources
      schemawise sources --check
      schemawise sources --remove shop_old
    """
    from schemawise import api

    if remove:
        removed = {name: api.remove_source(name, index_url=index_url) for name in remove}
        if as_json:
            print(json.dumps({"removed": removed}, indent=2))
            return
        for name, documents in removed.items():
            out.print(plain(f"removed {name} ({documents} documents) from the index"))
        return
    listed = api.sources(index_url=index_url)
    if check:
        freshness = api.source_freshness(index_url=index_url)
        for entry in listed:
            entry.update(freshness.get(entry["source"], {"current": None, "why": "not read"}))
    if as_json:
        print(json.dumps({"sources": listed}, indent=2, default=str))
        return
    if not listed:
        err.print(plain("nothing indexed yet: `schemawise index URL` adds a database", "dim"))
    for entry in listed:
        out.print(
            f"[bold]{entry['source']}[/] {entry['tables']} tables, {entry['documents']} documents, "
            f"version {entry['version']}, indexed {entry['indexed_at']:%Y-%m-%d %H:%M} "
            f"from {entry['url']}",
            highlight=False,
        )
        if check:
            style = {True: "green", False: "yellow", None: "red"}[entry["current"]]
            out.print(plain(f"  {entry['why']}", style))
            if entry.get("hint"):
                out.print(plain(f"  hint: {entry['hint']}", "dim"))


@app.command(short_help="The context pack for a question.")
@handle_errors
def context(
    question: Annotated[str, typer.Argument(help="The question, in words.")],
    evidence: Annotated[str, typer.Option("--evidence", help="Hints that come with it.")] = "",
    source: Annotated[
        list[str] | None,
        typer.Option("--source", help="Restrict to this source (repeat for several)."),
    ] = None,
    budget: Annotated[int | None, typer.Option("--budget", min=1, help="Tokens at most.")] = None,
    relevance_floor: Annotated[
        bool,
        typer.Option(
            "--relevance-floor/--no-relevance-floor",
            help="An empty pack, with the reason, when nothing in the index is about the "
            "question; --no-relevance-floor always returns the nearest tables.",
        ),
    ] = True,
    lexicon: Annotated[
        bool | None,
        typer.Option(
            "--lexicon/--no-lexicon",
            help="Also search each question word the index never saw as the nearest word the "
            'schema is named with ("vocalists" finds singer), and prefer the database whose '
            "words come nearest. Default: on when more than one database is searched (with the "
            "default embedder).",
            show_default=False,
        ),
    ] = None,
    index_url: IndexUrlOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The context pack for a question: tables with reasons, join paths, columns, text.

    \b
    Examples:
      schemawise context "net revenue per region" --source shop
      schemawise context "tracks never purchased" --budget 800 --json
    """
    from schemawise import api

    pack = api.context(
        question, evidence=evidence, sources=source, budget=budget,
        relevance_floor=relevance_floor, lexicon=lexicon, index_url=index_url,
    )  # fmt: skip
    if as_json:
        print(pack.model_dump_json(indent=2))
        return
    if not pack.tables:
        out.print(plain(f"nothing found: {pack.empty_reason or 'no table matched'}"))
        if pack.alternatives and pack.source is None:
            nearest = ", ".join(f"{a.source} ({a.score:.2f})" for a in pack.alternatives)
            out.print(plain(f"nearest: {nearest}; --source S --no-relevance-floor asks one"))
        return
    out.print(assemble((str(pack.source), "bold"), f" ({pack.tokens} tokens)"))
    for table in pack.tables:
        out.print(plain(f"  {table.name} {table.score:.4f}: {'; '.join(table.reasons)}"))
    # soft_wrap: the prompt text goes out as it is (a wrapped `-- warning` line is no comment)
    out.print(plain(pack.text), soft_wrap=True)
    # The notes go to stderr (stdout is the pack, for a pipe), after the pack and once it is
    # out, so that the two streams read in order when merged (`2>&1 | less`).
    sys.stdout.flush()
    if pack.truncated or pack.over_budget:
        gone = ", ".join(f"{d.kind} {d.name}" for d in pack.dropped)
        said = (
            f"over the budget of {pack.budget} tokens: this is the smallest honest pack"
            if pack.over_budget
            else f"truncated to the budget of {pack.budget} tokens"
        )
        err.print(plain(f"{said}; dropped: {gone or 'nothing'}", "yellow"))
    if pack.alternatives:
        close = ", ".join(f"{a.source} {a.score:.2f}" for a in pack.alternatives)
        err.print(plain(f"other databases, by how well they fit (1.00 = as well): {close}", "dim"))
    if pack.passed_over:
        # The nearest misses, so that a missing table is told from one nothing matched.
        passed = "; ".join(f"{t.name} ({t.reasons[0]})" for t in pack.passed_over[:3])
        err.print(plain(f"passed over: {passed}", "dim"))
    if pack.unknown_names:
        names = ", ".join(pack.unknown_names)
        said = f"note: {pack.source} has no table or column {names}: the pack holds the nearest"
        err.print(plain(f"{said} tables, which may not be the ones meant", "yellow"))


@db_app.command("start")
@handle_errors
def db_start() -> None:
    """Start the embedded PostgreSQL (a no-op when it runs).

    \b
    Examples:
      schemawise db start
    """
    from schemawise.db.embedded import ensure_started

    url = ensure_started()
    out.print(f"running: {url}", highlight=False)


@db_app.command("stop")
@handle_errors
def db_stop() -> None:
    """Stop the embedded PostgreSQL.

    \b
    Examples:
      schemawise db stop
    """
    from schemawise.db.embedded import stop

    out.print("stopped" if stop() else "not running")


@db_app.command("status", short_help="Whether it runs, its data folder and URL.")
@handle_errors
def db_status(as_json: JsonOpt = False) -> None:
    """Whether the embedded PostgreSQL runs, where its data lives, and its URL.

    \b
    Examples:
      schemawise db status
    """
    from schemawise.db.embedded import status

    state = status()
    if as_json:
        print(json.dumps(state.__dict__))
        return
    out.print(f"{'running' if state.running else 'stopped'}  data: {state.data_dir}")
    if state.url:
        out.print(f"url: {state.url}  pid: {state.pid}", highlight=False)


@db_app.command("url", short_help="The URL of the demo's database (started if needed).")
@handle_errors
def db_url() -> None:
    """Print the URL of the embedded database that holds the demo (starting it if needed).

    \b
    Examples:
      psql "$(schemawise db url)"
    """
    from schemawise.db.embedded import ensure_started

    print(ensure_started())


@bench_app.command("fk-recovery", short_help="Foreign keys stripped and inferred back: P/R/F1.")
@handle_errors
def bench_fk_recovery(
    folder: Annotated[Path, typer.Argument(help="Folder of SQLite databases (Spider layout).")],
    as_json: JsonOpt = False,
    no_data_checks: NoDataOpt = False,
    strip_keys: Annotated[
        bool, typer.Option("--strip-keys", help="Also drop primary keys and unique constraints.")
    ] = False,
    half: Annotated[
        str | None,
        typer.Option(
            "--half",
            help="Only the databases at even (tuning) or odd (held-out) positions in name order.",
        ),
    ] = None,
) -> None:
    """Strip declared foreign keys, infer them back, report precision / recall / F1.

    \b
    Examples:
      schemawise bench fk-recovery ../shared/bench/spider/database --json
      schemawise bench fk-recovery ../shared/bench/spider/database --half odd
    """
    from schemawise.bench import fk_recovery

    if not folder.exists():
        raise SchemawiseError(f"No such folder: {folder}", "e.g. ../shared/bench/spider/database")
    _print_benchmark(
        lambda say: fk_recovery.run(
            folder,
            data_checks=not no_data_checks,
            keep_keys=not strip_keys,
            half=half,
            progress=say,
        ),
        as_json,
    )


rows_app = typer.Typer(
    help="Search row contents by meaning and terms, per tenant.", no_args_is_help=True
)
app.add_typer(rows_app, name="rows")


def _admin_url(url: str) -> str:
    """Row search manages columns, triggers and its queue: it needs the owner's connection."""
    from schemawise.db.urls import parse_url

    parsed = parse_url(url)
    if parsed.kind == "embedded":
        from schemawise.db.embedded import admin_url

        return admin_url(parsed.target)
    if parsed.kind != "postgres":
        raise SchemawiseError(
            "Row search needs PostgreSQL with pgvector.",
            "Use a postgresql:// URL or `embedded`; SQLite and DuckDB files are not supported.",
        )
    return parsed.target


def _emit(doc: Any, as_json: bool) -> None:
    """The JSON document for scripts, or the same facts as readable lines for people."""
    if as_json:
        print(json.dumps(doc, indent=2, default=str))
    else:
        from schemawise.show_reports import print_document

        print_document(out, doc)


@rows_app.command("enable", short_help="Make a table searchable (idempotent).")
@handle_errors
def rows_enable(
    url: PgUrlArg,
    table: Annotated[str, typer.Argument(help="schema.table to make searchable.")],
    text: Annotated[
        str, typer.Option("--text", help="Text columns, comma-separated, most important first.")
    ],
    tenant: Annotated[str | None, typer.Option("--tenant", help="The tenant column.")] = None,
    model: Annotated[str | None, typer.Option("--model", help="Embedding model.")] = None,
    row_security: Annotated[
        bool,
        typer.Option(
            "--row-security", help="Scope every query run as schemawise_reader to --tenant (RLS)."
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Add the embedding and full-text columns, indexes, outbox and trigger (idempotent).

    \b
    Examples:
      schemawise rows enable embedded recruiting.assignments --text title --tenant owner_id
    """
    from schemawise.rows.enable import enable

    columns = [c.strip() for c in text.split(",") if c.strip()]
    report = enable(url, table, columns, tenant, model, row_security=row_security)
    doc = report.to_dict()
    if not report.iterative_scan:
        doc["warning"] = (
            f"pgvector {report.pgvector} has no iterative index scans: searches with a selective "
            "tenant filter use an exact scan (complete, slower on big tenants)."
        )
    if as_json:
        print(json.dumps(doc, indent=2, default=str))
    else:
        from schemawise.show_reports import print_rows_enabled

        print_rows_enabled(out, doc)


@rows_app.command("disable")
@handle_errors
def rows_disable(
    url: PgUrlArg,
    table: Annotated[str, typer.Argument(help="schema.table made searchable.")],
    as_json: JsonOpt = False,
) -> None:
    """Remove what `rows enable` added to the table.

    \b
    Examples:
      schemawise rows disable embedded recruiting.assignments
    """
    from schemawise.rows.enable import disable

    disable(url, table)
    if as_json:
        print(json.dumps({"table": table, "disabled": True}))
    else:
        out.print(assemble("row search removed from ", plain(table, "bold")))


@rows_app.command("status", short_help="Embedded, stale, queued and parked rows per table.")
@handle_errors
def rows_status(url: PgUrlArg, as_json: JsonOpt = False) -> None:
    """Embedded, missing, stale, queued and parked rows per searchable table.

    \b
    Examples:
      schemawise rows status embedded
    """
    import psycopg

    from schemawise.rows.status import status

    with psycopg.connect(_admin_url(url)) as conn:
        tables = status(conn)
    if as_json:
        print(json.dumps({"tables": tables}, indent=2, default=str))
        return
    if not tables:
        out.print("No table is searchable yet: `schemawise rows enable URL TABLE --text COLUMNS`.")
    for t in tables:
        calibrated = f"threshold {t['threshold']:.3f}" if t["calibrated"] else "UNCALIBRATED"
        out.print(
            f"[bold]{t['table']}[/] {t['embedded']:,}/{t['rows']:,} embedded, "
            f"{t['missing']:,} missing, {t['stale']:,} stale, "
            f"{t['queued']:,} queued, [red]{t['parked']:,} parked[/], {calibrated}",
            highlight=False,
        )
        for p in t["parked_examples"]:
            out.print(f"  parked {p['key']} after {p['attempts']} attempts: {p['last_error']}")


def _worker_settings(batch: int, poll: float, reconcile: float, attempts: int) -> Any:
    from schemawise.rows.worker import WorkerSettings

    return WorkerSettings(
        batch_size=batch, poll_seconds=poll, reconcile_seconds=reconcile, max_attempts=attempts
    )


@rows_app.command("worker", short_help="Keep searchable tables embedded, until stopped.")
@handle_errors
def rows_worker(
    url: PgUrlArg,
    batch: Annotated[int, typer.Option("--batch", help="Rows per batch.")] = 256,
    poll: Annotated[float, typer.Option("--poll", help="Seconds between polls.")] = 1.0,
    reconcile: Annotated[
        float, typer.Option("--reconcile", help="Seconds between reconciliations.")
    ] = 60.0,
    attempts: Annotated[int, typer.Option("--attempts", help="Failures before parking.")] = 5,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the final counts as JSON.")
    ] = False,
) -> None:
    """Keep searchable tables embedded: LISTEN + poll + reconcile, until SIGTERM or Ctrl-C.

    \b
    Examples:
      schemawise rows worker embedded
    """
    import signal

    from schemawise.rows.worker import Worker

    worker = Worker(_admin_url(url), _worker_settings(batch, poll, reconcile, attempts))

    def _stop(*_: Any) -> None:
        worker.stop.set()  # finish the batch in hand, then leave

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    err.print("worker running; SIGTERM or Ctrl-C stops it after the current batch")
    worker.run()
    err.print(f"worker stopped: {worker.stats}")
    if as_json:
        print(json.dumps(worker.stats.__dict__))


@rows_app.command("backfill", short_help="Embed every row without a current vector.")
@handle_errors
def rows_backfill(
    url: PgUrlArg,
    batch: Annotated[int, typer.Option("--batch", help="Rows per batch.")] = 512,
    retry_parked: Annotated[
        bool, typer.Option("--retry-parked", help="Give parked entries another round.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Embed every row that has no current vector, with a progress bar; safe to interrupt
    and run again (the queue lives in the database).

    \b
    Examples:
      schemawise rows backfill embedded
    """
    import psycopg
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    from schemawise.rows.worker import Worker

    worker = Worker(_admin_url(url), _worker_settings(batch, 1.0, 60.0, 5))
    with psycopg.connect(worker.url) as conn:
        if retry_parked:
            conn.execute(
                "UPDATE schemawise.rows_outbox SET parked_at = NULL, attempts = 0, "
                "next_attempt_at = clock_timestamp() WHERE parked_at IS NOT NULL"
            )
            conn.commit()
        worker.reconcile(conn)
        pending = conn.execute(
            "SELECT count(*) FROM schemawise.rows_outbox WHERE parked_at IS NULL"
        ).fetchone()
        total = int(pending[0]) if pending else 0
        with Progress(
            "[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
            TimeRemainingColumn(), console=real_console(err), disable=as_json,
        ) as bar:  # fmt: skip
            task = bar.add_task("embedding", total=total)
            done = worker.drain(conn, on_progress=lambda n: bar.advance(task, n))
    doc = {"settled": done, **worker.stats.__dict__}
    if as_json:
        print(json.dumps(doc, indent=2, default=str))
    else:
        from schemawise.show_reports import print_backfill

        print_backfill(out, doc)


@rows_app.command("search", short_help="Rows matching by meaning or terms, for one tenant.")
@handle_errors
def rows_search(
    url: PgUrlArg,
    table: Annotated[str, typer.Argument()],
    query: Annotated[str, typer.Argument(help="What to look for.")],
    tenant: Annotated[str | None, typer.Option("--tenant", help="The caller's tenant.")] = None,
    k: Annotated[int, typer.Option("-k", help="Rows at most.")] = 20,
    mode: Annotated[
        Literal["hybrid", "dense", "lexical"],
        typer.Option("--mode", help="By meaning and terms, by meaning only, or by terms only."),
    ] = "hybrid",
    where: Annotated[
        list[str] | None, typer.Option("--filter", help="column=value (repeatable).")
    ] = None,
    no_threshold: Annotated[
        bool,
        typer.Option("--no-threshold", help="Return the k nearest rows even past the threshold."),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Rows that match by meaning or by terms, for one tenant; empty when nothing is relevant.

    \b
    Examples:
      schemawise rows search embedded recruiting.assignments "healthcare" --tenant 7
    """
    import psycopg

    from schemawise.rows.config import load_config
    from schemawise.rows.search import SearchSettings, search

    filters = {}
    for item in where or []:
        column, sep, value = item.partition("=")
        if not sep:
            raise SchemawiseError(f"Bad filter {item!r}.", "Write --filter column=value.")
        filters[column.strip()] = value.strip()
    with psycopg.connect(_admin_url(url)) as conn:
        config = load_config(conn, table)
        settings = SearchSettings(k=k, mode=mode, use_threshold=not no_threshold)
        result = search(
            conn, config, query, tenant=tenant_value(tenant), filters=filters, settings=settings
        )
    doc = result.to_dict()
    if not config.calibrated:
        doc["warning"] = (
            "uncalibrated: no distance threshold, so the k nearest rows come back "
            "even when none is relevant; run `rows calibrate`"
        )
    if as_json:
        print(json.dumps(doc, indent=2, default=str))
    else:
        from schemawise.show_reports import print_search

        print_search(out, doc)


@rows_app.command("calibrate", short_help="Store the distance threshold best on labelled queries.")
@handle_errors
def rows_calibrate(
    url: PgUrlArg,
    table: Annotated[str, typer.Argument()],
    labels: Annotated[Path, typer.Option("--labels", help="JSONL: {query, tenant, relevant}.")],
    k: Annotated[int, typer.Option("-k", help="Rows each labelled query looks at.")] = 20,
    as_json: JsonOpt = False,
) -> None:
    """Pick and store the distance threshold that maximises F1 on labelled queries.

    \b
    Examples:
      schemawise rows calibrate embedded recruiting.assignments --labels labels.jsonl
    """
    import psycopg

    from schemawise.rows.calibrate import calibrate, read_labels
    from schemawise.rows.config import load_config

    labelled = read_labels(labels)
    with psycopg.connect(_admin_url(url)) as conn:
        report = calibrate(conn, load_config(conn, table), labelled, k)
    _emit(report, as_json)


@bench_app.command("validate", short_help="check on gold SQL: false alarms, mutations caught.")
@handle_errors
def bench_validate(
    dataset: Annotated[Literal["spider", "bird"], typer.Option("--dataset", help="The dataset.")],
    data: Annotated[Path, typer.Option("--data", help="The dataset folder.")],
    limit: Annotated[int | None, typer.Option("--limit", help="First N questions only.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """False alarms on gold SQL and detection of mutated gold SQL, per mutation operator.

    \b
    Examples:
      schemawise bench validate --dataset spider --data ../shared/bench/spider
    """
    from schemawise.bench import validate

    _print_benchmark(lambda say: validate.run(dataset, data, limit=limit, progress=say), as_json)


@bench_app.command("rows", short_help="Row search on the recruiting demo.")
@handle_errors
def bench_rows(
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Rebuild the recruiting data from scratch.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Row search on the recruiting demo: completeness, quality, empty answers, freshness.

    \b
    Examples:
      schemawise bench rows
    """
    from schemawise.bench import rows

    _print_benchmark(lambda say: rows.run(rebuild=rebuild, progress=say), as_json)


@bench_app.command("linking", short_help="Schema linking: table and column recall, pack size.")
@handle_errors
def bench_linking(
    dataset: Annotated[
        Literal["spider", "bird", "spider2", "golden"],
        typer.Option("--dataset", help="A shared benchmark, or your own golden set (--golden)."),
    ],
    data: GoldenDataOpt = None,
    golden: GoldenOpt = None,
    dbt: Annotated[
        Path | None,
        typer.Option("--dbt", help="With --dataset golden: the dbt project, as index reads it."),
    ] = None,
    overlay: Annotated[
        Path | None,
        typer.Option(
            "--overlay", help="With --dataset golden: the overlay file, as index reads it."
        ),
    ] = None,
    union: Annotated[
        bool, typer.Option("--union", help="Pool every database; no hint which one is asked.")
    ] = False,
    limit: Annotated[int | None, typer.Option("--limit", help="First N questions only.")] = None,
    no_baselines: Annotated[
        bool, typer.Option("--no-baselines", help="Skip the DDL top-k baselines.")
    ] = False,
    half: Annotated[
        Literal["all", "even", "odd"],
        typer.Option("--half", help="Only the even- or odd-numbered questions: tune on one."),
    ] = "all",
    items: Annotated[
        Path | None,
        typer.Option("--items", help="Write each question's outcome and measures (JSONL)."),
    ] = None,
    relevance_floor: Annotated[
        bool,
        typer.Option(
            "--relevance-floor/--no-relevance-floor",
            help="Packs with the relevance floor on (the default) or off.",
        ),
    ] = True,
    shared_documents: Annotated[
        int | None,
        typer.Option(
            "--shared-documents",
            help="How many join-path, example and glossary documents count for one table.",
        ),
    ] = None,
    reworded: Annotated[
        Path | None,
        typer.Option(
            "--reworded",
            help="Ask these rewordings instead (JSONL {number, question}; gold unchanged).",
        ),
    ] = None,
    lexicon: Annotated[
        bool | None,
        typer.Option(
            "--lexicon/--no-lexicon",
            help="Read unknown question words as the nearest schema words. Default: with "
            "--union only (and the default embedder), as `context` does when more than one "
            "database is searched.",
            show_default=False,
        ),
    ] = None,
    describe: Annotated[
        bool,
        typer.Option(
            "--describe",
            help="The configured model describes each table first, as index --describe does "
            "(replies kept: a second run asks it nothing new).",
        ),
    ] = False,
    model_picks_source: Annotated[
        bool,
        typer.Option(
            "--model-picks-source",
            help="With --union: the configured model picks the database among close calls, "
            "as the assistant does.",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Schema linking: strict table and column recall of the context pack, and its size.

    \b
    Examples:
      schemawise bench linking --dataset spider --data ../shared/bench/spider --union --json
      schemawise bench linking --dataset spider --data ../shared/bench/spider --union \\
        --reworded src/schemawise/bench/synonyms_spider.jsonl
      schemawise bench linking --dataset golden --golden my.yaml --data postgresql://reader@host/dw
    """
    from schemawise.bench import linking

    describer = None
    if describe:
        from schemawise.agent.llm import require_llm
        from schemawise.enrich.generated import with_model

        describer = with_model(require_llm())
    if model_picks_source and not union:
        raise typer.BadParameter("it picks among pooled databases: add --union.",
                                 param_hint="--model-picks-source")  # fmt: skip
    asked, picker = None, None
    if model_picks_source:
        from schemawise.agent.llm import require_llm
        from schemawise.agent.rank import source_picker

        asked = require_llm().each_call_fresh()
        picker = partial(source_picker, asked, fail_fast=True)

    def run(say: Callable[[str], None]) -> dict[str, Any]:
        result = linking.run(
            dataset, data, golden=golden, dbt=dbt, overlay=overlay, union=union, limit=limit,
            baselines=not no_baselines, half=half, items=items, relevance_floor=relevance_floor,
            shared_documents=shared_documents,
            reworded=reworded, lexicon=lexicon, describe=describer, pick_source=picker,
            progress=say,
        )  # fmt: skip
        if asked is not None:
            # Every model call of the run: a pick that failed or named no candidate leaves
            # the vote's choice, so the report says how many there were.
            result["model_calls"] = len(asked.calls)
            result["model_calls_failed"] = sum(not c.ok for c in asked.calls)
        return result

    _print_benchmark(run, as_json)


@bench_app.command("context-speed", short_help="Indexing throughput and context latency.")
@handle_errors
def bench_context_speed(
    tables: Annotated[
        int, typer.Option("--tables", help="Tables in the synthetic catalog.")
    ] = 2000,
    as_json: JsonOpt = False,
) -> None:
    """Indexing throughput and `context` latency (p50/p95) on a synthetic catalog.

    \b
    Examples:
      schemawise bench context-speed --tables 2000
    """
    from schemawise.bench import context_speed

    _print_benchmark(lambda say: context_speed.run(tables, progress=say), as_json)


@bench_app.command("startup", short_help="How long the command line takes to start.")
@handle_errors
def bench_startup(
    runs: Annotated[int, typer.Option("--runs", help="Fresh processes per case.")] = 20,
    as_json: JsonOpt = False,
) -> None:
    """Start-up time of `schemawise --version`, `--help` and a command's `--help` (p50/p95 of
    fresh processes), beside a bare `python -c pass`.

    \b
    Examples:
      schemawise bench startup
      schemawise bench startup --runs 50 --json
    """
    from schemawise.bench import startup

    if runs < 1:
        raise SchemawiseError("--runs must be at least 1.", "e.g. --runs 20")
    _print_benchmark(lambda say: startup.run(runs, progress=say), as_json)


@bench_app.command("extract", short_help="Extraction time on synthetic Postgres catalogs.")
@handle_errors
def bench_extract(
    tables: Annotated[
        str, typer.Option("--tables", help="Catalog sizes to build, comma-separated.")
    ] = "500,1000,2000",
    as_json: JsonOpt = False,
    url: Annotated[
        str, typer.Option("--url", help="Postgres to build the catalog in (default: embedded).")
    ] = "embedded",
) -> None:
    """Build synthetic Postgres catalogs and time extraction and data checks.

    \b
    Examples:
      schemawise bench extract --tables 500,1000
    """
    from schemawise.bench import extract_scale

    try:
        sizes = [int(part) for part in tables.split(",") if part.strip()]
    except ValueError:
        raise SchemawiseError(
            f"--tables takes numbers: {tables!r}", "e.g. --tables 500,1000,2000"
        ) from None
    _print_benchmark(lambda say: extract_scale.run(sizes, url=url, progress=say), as_json)


SourceOpt = Annotated[
    list[str] | None,
    typer.Option("--source", help="Restrict to this indexed source (repeat for several)."),
]


def _assistant(index_url: str | None) -> Any:
    """The assistant with the configured model, or none (then `ask` prints a ready prompt)."""
    from schemawise.agent.assistant import Assistant
    from schemawise.agent.conversation import ConversationStore
    from schemawise.agent.llm import LLM, configured_spec, optional_llm

    llm = optional_llm()
    fast = configured_spec("fast")
    return Assistant(llm, fast_llm=LLM.from_spec(fast) if fast else None, index_url=index_url,
                     conversations=ConversationStore())  # fmt: skip


def _ask_options(source: list[str] | None, evidence: str, no_run: bool, max_rows: int,
                 timeout: float, tenant: str | None, max_fixes: int,
                 relevance_floor: bool = True, lexicon: bool | None = None,
                 pick_source: bool = False) -> Any:  # fmt: skip
    from schemawise.agent.assistant import AskOptions
    from schemawise.db.guard import Limits

    if max_rows < 1 or timeout <= 0 or not 0 <= max_fixes <= 5:
        raise SchemawiseError(
            "--max-rows and --timeout must be positive and --max-fixes 0 to 5.",
            "e.g. --max-rows 100",
        )
    return AskOptions(sources=source, evidence=evidence, run=not no_run,
                      limits=Limits(max_rows=max_rows, timeout_seconds=timeout),
                      tenant=tenant_value(tenant), max_fixes=max_fixes,
                      relevance_floor=relevance_floor, lexicon=lexicon,
                      pick_source=pick_source)  # fmt: skip


MaxRowsOpt = Annotated[int, typer.Option("--max-rows", help="Rows returned at most.")]
TimeoutOpt = Annotated[float, typer.Option("--timeout", help="Seconds the query may run.")]
MaxFixesOpt = Annotated[int, typer.Option("--max-fixes", help="Fix rounds after the checks.")]
TenantOpt = Annotated[
    str | None, typer.Option("--tenant", help="The caller's tenant: runs as its role.")
]
EvidenceOpt = Annotated[str, typer.Option("--evidence", help="Hints that come with it.")]
FloorOpt = Annotated[
    bool,
    typer.Option(
        "--relevance-floor/--no-relevance-floor",
        help="Say so when nothing in the index is about the question (the default), or always "
        "write SQL over the nearest tables.",
    ),
]


LexiconOpt = Annotated[
    bool | None,
    typer.Option(
        "--lexicon/--no-lexicon",
        help="Read question words the index never saw as the nearest schema words, and prefer "
        "the database whose words, and whose tables read as short cards, come nearest. "
        "Default: on when more than one database is searched (with the default embedder).",
        show_default=False,
    ),
]
PickSourceOpt = Annotated[
    bool,
    typer.Option(
        "--pick-source",
        help="With several databases searched: the model picks the database when the vote is "
        "close (off by default: with the local 1.5B model it lost more questions than it won, "
        "docs/benchmarks.md).",
    ),
]


@app.command(short_help="Answer a question with checked SQL and its result.")
@handle_errors
def ask(
    question: Annotated[str, typer.Argument(help="The question, in words, or SQL to check.")],
    source: SourceOpt = None,
    evidence: EvidenceOpt = "",
    show_context: Annotated[
        bool, typer.Option("--show-context", help="Print the context pack too.")
    ] = False,
    no_run: Annotated[bool, typer.Option("--no-run", help="Check the SQL; do not run it.")] = False,
    max_rows: MaxRowsOpt = 1000,
    timeout: TimeoutOpt = 30.0,
    max_fixes: MaxFixesOpt = 2,
    tenant: TenantOpt = None,
    relevance_floor: FloorOpt = True,
    lexicon: LexiconOpt = None,
    pick_source: PickSourceOpt = False,
    index_url: IndexUrlOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Answer a question: SQL written from the context pack, checked, fixed, run inside the
    guards, and the answer stated from the result. Without a model: the pack and a ready
    prompt. Exit 0 with an answer, 1 without one.

    \b
    Examples:
      schemawise ask "which region had the most refunds last year?" --source shop
      schemawise ask "SELECT nam FROM shop.customers"   # checked and explained
    """
    options = _ask_options(source, evidence, no_run, max_rows, timeout, tenant, max_fixes,
                           relevance_floor, lexicon, pick_source)  # fmt: skip
    helper = _assistant(index_url)
    with progress(not as_json) as say:
        say("thinking: context, SQL, checks")
        reply = helper.ask(question, options=options)
    if as_json:
        print(reply.model_dump_json(indent=2))
    else:
        from schemawise.show import print_reply

        print_reply(out, reply, show_context=show_context)
    raise typer.Exit(0 if reply.status in ("answered", "tables", "explained", "checked") else 1)


CHAT_HELP = (
    "Ask in words; follow-ups build on the previous answer. Commands: /sql (last SQL), "
    "/context (last context pack), /tables (tables used), /feedback TEXT (on the last answer, "
    "kept with it), /source NAME (ask only that database from now on; /source alone: all), "
    "/new (new conversation), /quit (or Ctrl-D)."
)


@app.command(short_help="A conversation with the assistant in the terminal.")
@handle_errors
def chat(
    source: SourceOpt = None,
    max_rows: MaxRowsOpt = 1000,
    timeout: TimeoutOpt = 30.0,
    tenant: TenantOpt = None,
    relevance_floor: FloorOpt = True,
    lexicon: LexiconOpt = None,
    pick_source: PickSourceOpt = False,
    index_url: IndexUrlOpt = None,
) -> None:
    """A conversation in the terminal: each turn keeps the previous ones as context.

    \b
    Examples:
      schemawise chat --source shop
    """
    from schemawise.show import print_context, print_reply, print_sql

    options = _ask_options(source, "", False, max_rows, timeout, tenant, 2, relevance_floor,
                           lexicon, pick_source)  # fmt: skip
    helper = _assistant(index_url)
    conversation = helper.conversations.start(",".join(source or []) or None)
    out.print(f"[bold]schemawise chat[/] — {CHAT_HELP}", highlight=False)
    if helper.llm is None:
        from schemawise.agent.llm import HOW_TO_CONFIGURE

        out.print(f"[yellow]No model is configured[/]: you get context packs and ready prompts. "
                  f"{HOW_TO_CONFIGURE}", highlight=False)  # fmt: skip
    last = None
    while True:
        try:
            line = input("you> ").strip()
        except EOFError:
            out.print()
            break
        if not line:
            continue
        if line in ("/quit", "/exit"):
            break
        if line == "/new":
            conversation = helper.conversations.start(",".join(source or []) or None)
            out.print("new conversation")
            continue
        if line == "/source" or line.startswith("/source "):
            if _chat_source(options, line.split()[1:], index_url):
                # The turns so far were about another database: their SQL would mislead.
                conversation = helper.conversations.start(",".join(options.sources or []) or None)
                last = None
            continue
        if line.startswith("/feedback"):
            text = line.removeprefix("/feedback").strip()
            if last is None or last.turn is None or not text:
                out.print("Ask something first, then: /feedback what was right or wrong.")
            else:
                helper.conversations.feedback(conversation, last.turn, text)
                out.print("kept with the last answer")
            continue
        if line.startswith("/"):
            if line not in ("/sql", "/context", "/tables") or last is None:
                out.print(CHAT_HELP if line not in ("/sql", "/context", "/tables")
                          else "Nothing asked yet.", highlight=False)  # fmt: skip
            elif line == "/sql":
                print_sql(out, last.sql)
            elif line == "/context":
                print_context(out, last)
            else:
                out.print(plain(", ".join(last.tables or last.context.get("tables", []))))
            continue
        with progress(True) as say:
            say("thinking")
            try:
                last = helper.ask(line, conversation=conversation, options=options)
            except SchemawiseError as exc:
                out.print(assemble(("error: ", "bold red"), plain(exc.message)))
                if exc.hint:
                    out.print(assemble(("hint: ", "bold"), plain(exc.hint)))
                continue
        print_reply(out, last)


def _chat_source(options: Any, names: list[str], index_url: str | None) -> bool:
    """`/source NAME …` in chat: the databases the following turns search (a close call names
    the other database; this is how to take it). No name: every indexed database again.
    True when the choice changed (a new conversation starts)."""
    from schemawise import api

    try:
        known = {s["source"] for s in api.sources(index_url=index_url)}
    except SchemawiseError as exc:
        out.print(assemble(("error: ", "bold red"), plain(exc.message)))
        return False
    unknown = [n for n in names if n not in known]
    if unknown:
        out.print(assemble(("no source named ", "bold red"), plain(", ".join(unknown)),
                           "; indexed: ", plain(", ".join(sorted(known)))))  # fmt: skip
        return False
    options.sources = names or None
    said = f"questions now go to {', '.join(names)}" if names else "questions now search all"
    out.print(plain(f"{said} (a new conversation)"))
    return True


@app.command(short_help="Serve schemawise as MCP tools to other agents.")
@handle_errors
def serve(
    mcp: Annotated[bool, typer.Option("--mcp", help="Serve the MCP tools.")] = False,
    http: Annotated[
        int | None,
        typer.Option("--http", help="Streamable HTTP on this port instead of stdio."),
    ] = None,
    host: Annotated[
        str, typer.Option("--host", help="Address for --http; loopback unless you mean it.")
    ] = "127.0.0.1",
    tenant: TenantOpt = None,
    index_url: IndexUrlOpt = None,
) -> None:
    """Serve schemawise to other agents: `--mcp` over stdio (Claude Desktop, IDEs) or
    `--mcp --http PORT` (streamable HTTP on 127.0.0.1).

    \b
    Examples:
      schemawise serve --mcp
      schemawise serve --mcp --http 8765
    """
    from schemawise.agent.llm import configured_spec
    from schemawise.server.mcp import SchemawiseTools, build_server

    if not mcp:
        raise SchemawiseError("Say what to serve.", "schemawise serve --mcp [--http PORT]")
    tools = SchemawiseTools(index_url=index_url, tenant=tenant_value(tenant))
    server = build_server(tools, with_ask=configured_spec() is not None)
    if http is None:
        server.run("stdio")
        return
    if host not in ("127.0.0.1", "localhost", "::1"):
        warning = (f"[bold yellow]warning:[/] serving on {plain(host)}: the MCP server has no "
                   "authentication of its own; put it behind one that does.")  # fmt: skip
        err.print(warning, highlight=False)
    err.print(f"MCP over streamable HTTP at http://{host}:{http}/mcp", highlight=False)
    server.run("streamable-http", host=host, port=http)


@app.command("eval", short_help="Evaluate end to end: recall, valid SQL, execution accuracy.")
@handle_errors
def eval_command(
    dataset: Annotated[
        Literal["spider", "bird", "golden"],
        typer.Option("--dataset", help="A shared benchmark, or your own golden set (--golden)."),
    ],
    data: GoldenDataOpt = None,
    golden: GoldenOpt = None,
    union: Annotated[
        bool, typer.Option("--union", help="No database given: every shared one is indexed.")
    ] = False,
    limit: Annotated[int | None, typer.Option("--limit", help="A seeded sample of N.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="The sample's seed.")] = 0,
    prompt: Annotated[
        Literal["context", "whole-schema"],
        typer.Option("--prompt", help="What the model is shown: the context pack or all the DDL."),
    ] = "context",
    no_fix: Annotated[bool, typer.Option("--no-fix", help="No fix rounds.")] = False,
    llm: Annotated[
        str | None, typer.Option("--llm", help="A model setting (default SCHEMAWISE_LLM).")
    ] = None,
    gold_as_prediction: Annotated[
        bool, typer.Option("--gold-as-prediction", help="Score the gold SQL (no model).")
    ] = False,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Ask the model again instead of resuming.")
    ] = False,
    kept_only: Annotated[
        bool,
        typer.Option(
            "--kept-only",
            help="Score only the questions a run already answered; no model is called.",
        ),
    ] = False,
    items: Annotated[bool, typer.Option("--items/--no-items", help="Per-question rows.")] = True,
    describe: Annotated[
        bool,
        typer.Option(
            "--describe",
            help="Index the databases with the model's table descriptions (index --describe).",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Evaluate end to end: retrieval, generation and execution accuracy per question and in
    aggregate, with the stage that broke on every wrong answer. Resumes an interrupted run.

    \b
    Examples:
      schemawise eval --dataset spider --data ../shared/bench/spider --limit 200 --llm local
      schemawise eval --dataset golden --golden my.yaml --data sqlite:///my.db --json
    """
    from schemawise.eval.predict import GoldPredictor
    from schemawise.eval.runner import run_eval

    if kept_only and (fresh or gold_as_prediction):
        raise SchemawiseError(
            "--kept-only scores what a run already answered; it cannot go with "
            + ("--fresh." if fresh else "--gold-as-prediction."),
            "Leave that option out.",
        )
    with progress(True) as say:
        predictor: Any = GoldPredictor()
        if not gold_as_prediction:
            predictor = _eval_predictor(dataset, data, golden, union, prompt, not no_fix, llm,
                                        fresh, limit, seed, say, kept_only, describe)  # fmt: skip

        def step(done: int, total: int, result: Any) -> None:
            say(f"question {done}/{total}: {'right' if result.correct else 'wrong'}")

        # A benchmark's folder is a path; a golden set's database may be a URL (kept as typed).
        location = Path(data) if data is not None and dataset != "golden" else data
        report = run_eval(dataset, location, golden=golden, limit=limit, seed=seed,
                          predictor=predictor, progress=step,
                          only=predictor.kept if kept_only else None)  # fmt: skip
    doc = report.to_dict(items=items)
    from schemawise.eval.assistant import right_database_rate

    doc["metrics"]["right_database"] = right_database_rate(report.items)
    if as_json:
        print(json.dumps(doc, indent=2, default=str))
        return
    from schemawise.show_reports import print_document

    out.print(assemble(plain(report.predictor, "bold"), f" on {dataset}: "
                       f"{doc['counts']['questions']} questions"))  # fmt: skip
    wrong = {stage: n for stage, n in doc["attribution"].items() if n}
    counts = doc["counts"]
    unmeasured = counts.get("not_measured") or {}
    print_document(out, {
        **doc["metrics"],
        "measured": f"{counts['measured']} of {counts['questions']}" + (
            f" (not measured: {', '.join(f'{k} {v}' for k, v in unmeasured.items())})"
            if unmeasured else ""),
        "wrong answers by stage (SQL that did not run included)": wrong or "none",
    }, indent=1)  # fmt: skip


def _eval_predictor(dataset: str, data: str | None, golden: Path | None, union: bool,
                    prompt: str, fix: bool, llm_spec: str | None, fresh: bool,
                    limit: int | None, seed: int, say: Callable[[str], None],
                    kept_only: bool = False, describe: bool = False) -> Any:  # fmt: skip
    """The assistant on the evaluation's own index, with the databases it needs indexed."""
    import hashlib

    from schemawise.agent.llm import LLM, Budget, configured_spec, parse_spec, require_llm
    from schemawise.config import home_dir
    from schemawise.eval.assistant import (
        AssistantPredictor,
        benchmark_databases,
        ensure_indexed,
        eval_index_url,
    )

    spec = parse_spec(llm_spec) if llm_spec else configured_spec()
    if kept_only and spec is not None:
        # Named for the cache, never called: a local model's server is not started.
        model = LLM(_not_asked(), spec.text, spec.small, Budget())
    else:
        model = LLM.from_spec(spec, Budget()) if spec else require_llm()
    index_url = eval_index_url()
    databases: dict[str, str] = {}
    if dataset in ("spider", "bird") and data is not None:
        databases = benchmark_databases(dataset, Path(data))
    if union:
        # Every shared Spider and BIRD database, found beside the dataset folder given.
        if data is None or dataset == "golden":
            raise SchemawiseError(
                "--union needs --dataset spider or bird with --data.",
                "e.g. --dataset spider --data ../shared/bench/spider --union",
            )
        bench = Path(data).parent if dataset == "spider" else Path(data).parent.parent
        for name, folder in (("spider", bench / "spider"), ("bird", bench / "bird" / "dev")):
            if folder.is_dir():
                databases |= benchmark_databases(name, folder)
    if dataset == "golden" and golden is not None:
        from schemawise.eval.golden import load_golden
        from schemawise.eval.runner import golden_resolver

        resolve = golden_resolver(data)
        for item in load_golden(golden):
            target = resolve(item)
            databases[target.name] = target.url
    from schemawise.enrich.generated import INSTRUCTIONS_KEY, with_model

    if not kept_only:  # kept answers are scored without reading the index
        ensure_indexed(index_url, databases, say, describe=with_model(model) if describe else None)
    # Limit and seed only choose questions; each cached line is keyed by its question, so
    # samples of other sizes reuse the answers they share. Described runs keep their own,
    # per instructions the descriptions were written under.
    config = json.dumps([model.name, dataset, str(data), str(golden), union, prompt, fix]
                        + ([f"described:{INSTRUCTIONS_KEY}"] if describe else []))  # fmt: skip
    folder = home_dir() / "eval"
    folder.mkdir(exist_ok=True)
    cache = folder / f"predictions-{hashlib.sha256(config.encode()).hexdigest()[:12]}.jsonl"
    if fresh and cache.exists():
        cache.unlink()
    return AssistantPredictor(model, index_url=index_url, prompt=prompt,  # type: ignore[arg-type]
                              union=union, fix=fix, cache=cache)  # fmt: skip


def _not_asked() -> Any:
    """A model for --kept-only: every question scored has a kept answer, so a call is a bug."""
    from pydantic_ai.models.function import FunctionModel

    def refuse(*_: Any) -> Any:
        raise SchemawiseError("--kept-only called the model.", "Report this as a bug.")

    return FunctionModel(refuse)


@app.command(short_help="The assistant's failed and fixed generations.")
@handle_errors
def failures(
    golden: Annotated[
        Path | None,
        typer.Option("--golden", help="Write them as a golden set (YAML) for `eval`."),
    ] = None,
    index_url: IndexUrlOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The assistant's failed and fixed generations (failures.jsonl in the schemawise home);
    `--golden FILE` turns them into a golden set to review and evaluate with.

    \b
    Examples:
      schemawise failures --golden review.yaml
    """
    from schemawise.agent import failures as log

    logged = log.entries()
    if golden is not None:
        from schemawise import api

        urls = {s["source"]: s["url"] for s in api.sources(index_url=index_url)}
        golden.write_text(log.to_golden(logged, urls))
        fixed = sum(1 for e in logged if e.get("outcome") == "fixed")
        out.print(f"{len(logged)} items written to {plain(str(golden))}: {fixed} with a gold "
                  f"to review, {len(logged) - fixed} to write", highlight=False)  # fmt: skip
        return
    if as_json:
        print(json.dumps({"failures": logged}, indent=2, default=str))
        return
    for entry in logged:
        out.print(assemble((str(entry.get("outcome")), "bold"), " ",
                                plain(entry.get("question", "")), " — ",
                                plain(", ".join(entry.get("error_classes", [])))))  # fmt: skip
    if not logged:
        out.print("No failed or fixed generations yet.")


def _add_model_commands() -> None:
    from schemawise.model.cli import model_app

    app.add_typer(model_app, name="model")


_add_model_commands()


@app.callback(invoke_without_command=True)
def main(
    version: Annotated[bool, typer.Option("--version", help="Print the version.")] = False,
) -> None:
    if version:
        print(__version__)
        raise typer.Exit(0)
