"""`schemawise serve --mcp`: the context engine, the checks, guarded runs, row search and the
assistant as MCP tools (the official SDK's MCPServer), over stdio or streamable HTTP.

Tools never raise for an expected outcome: a refused query, an unknown source or a missing
model comes back as a structured result with `ok: false` and the reason, because a raised
error reaches the client as a bare "Error executing tool". The caller's tenant is fixed when
the server starts (`--tenant`): a client cannot pick another.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from schemawise.errors import SchemawiseError

Question = Annotated[str, Field(description="The question, in words.")]
SourceName = Annotated[
    str | None,
    Field(description="An indexed source (list_sources); may be left out when only one is."),
]
Sql = Annotated[str, Field(description="One read-only SQL statement.")]

INSTRUCTIONS = (
    "schemawise answers questions about the indexed databases. Start with list_sources, "
    "then get_context for a question (tables, join paths with their grain and fan-out "
    "warnings, columns, definitions). Write SQL from that context, call check_sql, then "
    "run_sql: it runs read-only inside guards and returns refusals with their reason and hint. "
    "explain_error turns a database error into a classified problem with a hint."
)


def _safe[F: Callable[..., dict[str, Any]]](func: F) -> F:
    """Every SchemawiseError becomes `{ok: false, error: {type, message, hint}}`."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            return {"ok": True, **func(*args, **kwargs)}
        except SchemawiseError as exc:
            return {"ok": False, "error": exc.to_dict()}

    return wrapper  # type: ignore[return-value]


@dataclass
class SchemawiseTools:
    """The tools as plain methods (testable without a client); see `build_server`."""

    index_url: str | None = None
    tenant: Any = None
    max_rows: int = 200
    timeout_seconds: float = 30.0

    def _source(self, source: str | None) -> tuple[str, Any, str | None]:
        """(name, graph, url) of a source; the only one when there is one."""
        from schemawise.api import index_url_or_embedded
        from schemawise.db.urls import without_redacted_password
        from schemawise.index.connection import connect_index
        from schemawise.index.sources import list_sources, load_graphs

        with connect_index(index_url_or_embedded(self.index_url)) as conn:
            graphs = load_graphs(conn, [source] if source else None)
            # Stored without their passwords: libpq takes them from PGPASSWORD or ~/.pgpass.
            urls = {s["source"]: without_redacted_password(s["url"]) for s in list_sources(conn)}
        if source is None:
            if len(graphs) != 1:
                raise SchemawiseError(
                    f"{len(graphs)} sources are indexed; say which one.",
                    f"Pass source, one of: {', '.join(sorted(graphs))}.",
                )
            source = next(iter(graphs))
        return source, graphs[source], urls.get(source)

    @_safe
    def list_sources(self) -> dict[str, Any]:
        from schemawise import api

        # A client sees which files a source was enriched with, not where they are on this
        # machine (the server's paths are no client's business).
        listed = api.sources(index_url=self.index_url)
        for entry in listed:
            url = str(entry.get("url") or "")
            if url.lower().startswith(("sqlite:///", "duckdb:///")):
                # A database file by its name, as the files below: not where it lies.
                entry["url"] = f"{url.split(':', 1)[0]}:///{Path(url.split(':///', 1)[1]).name}"
            options = entry.get("options") or {}
            for key in ("dbt", "overlay", "dictionary", "query_log"):
                if isinstance(options.get(key), str) and options[key] != "pg_stat_statements":
                    options[key] = Path(options[key]).name
        return {"sources": listed}

    @_safe
    def get_context(
        self, question: Question, source: SourceName = None,
        evidence: Annotated[str, Field(description="Hints that come with the question.")] = "",
        budget: Annotated[int | None, Field(description="Tokens at most.")] = None,
        follows: Annotated[str, Field(description=(
            "For a follow-up: the earlier questions it builds on, one per line, read together "
            "with it (no relevance floor then: they passed it). Give `source` too."
        ))] = "",
    ) -> dict[str, Any]:  # fmt: skip
        from schemawise import api

        pack = api.context(question, evidence=evidence, sources=[source] if source else None,
                           budget=budget, index_url=self.index_url, follows=follows)  # fmt: skip
        return {"context": pack.model_dump(mode="json")}

    @_safe
    def find_tables(self, question: Question, source: SourceName = None) -> dict[str, Any]:
        from schemawise import api

        pack = api.context(question, sources=[source] if source else None,
                           index_url=self.index_url)  # fmt: skip
        tables = [{"name": t.name, "reasons": t.reasons} for t in pack.tables]
        found: dict[str, Any] = {"source": pack.source, "tables": tables}
        if pack.empty_reason:  # nothing found is an answer: say why (the relevance floor)
            found["empty_reason"] = pack.empty_reason
            # No database chosen: the ones it came nearest to, for the client to show (the
            # floor applies to a named source too).
            found["nearest"] = [a.source for a in pack.alternatives]
        return found

    @_safe
    def get_join_path(
        self,
        tables: Annotated[list[str], Field(description="Tables to connect, at least two.")],
        source: SourceName = None,
    ) -> dict[str, Any]:
        from schemawise.graph.paths import connecting_tree

        if len(set(tables)) < 2:  # as the command line's `path` says
            raise SchemawiseError(
                "get_join_path needs at least two tables.",
                'Pass two or more, e.g. {"tables": ["orders", "regions"]}.',
            )
        _, graph, _ = self._source(source)
        return {"join_path": connecting_tree(graph, tables).model_dump(mode="json")}

    @_safe
    def check_sql(self, sql: Sql, source: SourceName = None) -> dict[str, Any]:
        from schemawise.db.guard import Deadline
        from schemawise.runner import bounded_check

        _, graph, _ = self._source(source)
        # Under the run's deadline, as run_sql's check is: untrusted SQL of some shapes is
        # slow to analyse, and a worker thread must not be held for minutes.
        deadline = Deadline.after(self.timeout_seconds)
        return {"check": bounded_check(sql, graph, "auto", None, deadline).model_dump(mode="json")}

    @_safe
    def run_sql(
        self, sql: Sql, source: SourceName = None,
        max_rows: Annotated[int, Field(description="Rows returned at most (≤ 200).")] = 100,
    ) -> dict[str, Any]:  # fmt: skip
        from schemawise.db.guard import Limits
        from schemawise.runner import run_checked

        name, graph, url = self._source(source)
        if url is None:
            raise SchemawiseError(f"Source {name} has no URL to run on.", "Index it again.")
        limits = Limits(max_rows=max(1, min(max_rows, self.max_rows)),
                        timeout_seconds=self.timeout_seconds)  # fmt: skip
        outcome = run_checked(url, sql, graph=graph, limits=limits, fanout="auto",
                              tenant=self.tenant)  # fmt: skip
        doc = outcome.to_dict()
        if not outcome.ok:
            problems = [*outcome.check.errors, *([outcome.error] if outcome.error else [])]
            doc["refused"] = [p.model_dump() for p in problems]
            reason = "; ".join(f"{p.type}: {p.message}" for p in problems)
            return {"ran": False, "reason": reason or "not run", "run": doc}
        return {"ran": True, "run": doc}

    @_safe
    def search_rows(
        self,
        table: Annotated[str, Field(description="A table with row search enabled.")],
        query: Annotated[str, Field(description="What to look for, in words.")],
        source: SourceName = None,
        k: Annotated[int, Field(description="Rows at most (≤ 100).")] = 20,
    ) -> dict[str, Any]:
        import psycopg

        from schemawise.rows.config import load_config
        from schemawise.rows.search import SearchSettings, search
        from schemawise.runner import resolve_target

        _, _, url = self._source(source)
        target = resolve_target(url or "")
        if target.kind != "postgres":
            raise SchemawiseError("Row search needs a PostgreSQL source.", "Use run_sql.")
        with psycopg.connect(target.admin or target.location) as conn:
            config = load_config(conn, table)
            found = search(conn, config, query, tenant=self.tenant,
                           settings=SearchSettings(k=max(1, min(k, 100))))  # fmt: skip
        return {"search": found.to_dict()}

    @_safe
    def explain_error(
        self, sql: Sql,
        error: Annotated[str, Field(description="The database's error message.")],
        source: SourceName = None,
    ) -> dict[str, Any]:  # fmt: skip
        from schemawise.validate.errors import classify

        _, graph, _ = self._source(source)
        backend = graph.dialect or "postgres"
        problem = classify(backend, error, None, graph=graph, sql=sql)
        return {"problem": problem.model_dump()}

    @_safe
    def ask(self, question: Question, source: SourceName = None) -> dict[str, Any]:
        from schemawise.agent.assistant import AskOptions, Assistant
        from schemawise.agent.llm import require_llm

        helper = Assistant(require_llm(), index_url=self.index_url)
        options = AskOptions(sources=[source] if source else None, tenant=self.tenant)
        return {"reply": helper.ask(question, options=options).model_dump(mode="json")}


TOOL_DESCRIPTIONS = {
    "list_sources": "The indexed databases (sources) with their sizes and versions.",
    "find_tables": "Which tables answer a question, with the reasons they were chosen; when "
    "nothing is about it, why (empty_reason) and, for information, the sources it came "
    "nearest to (nearest).",
    "get_context": "The context pack for a question: tables, join paths (grain, fan-out "
    "warnings), pruned columns, definitions, value meanings and prompt-ready text.",
    "get_join_path": "How a set of tables joins: edges with cardinality, grain, warnings.",
    "check_sql": "Check SQL against the schema graph without running it: safety, names, "
    "joins, fan-out, business rules; problems carry a hint.",
    "run_sql": "Run one read-only query inside every guard (check, EXPLAIN gate, timeout, row "
    "cap). A refusal comes back with ran=false and its reason, not as an error.",
    "search_rows": "Rows of a table with row search enabled that match text by meaning.",
    "explain_error": "Classify a database error for SQL (unknown_column, type_mismatch, …) "
    "with a hint on how to fix it.",
    "ask": "Answer a question end to end: SQL written by the configured model, checked, "
    "run guarded, answered from the result (needs SCHEMAWISE_LLM).",
}


def build_server(tools: SchemawiseTools, *, with_ask: bool) -> Any:
    """The MCPServer with each tool run in a worker thread (they block on databases)."""
    import anyio
    from mcp.server.mcpserver import MCPServer

    from schemawise import __version__

    server = MCPServer("schemawise", instructions=INSTRUCTIONS, version=__version__)
    names = [n for n in TOOL_DESCRIPTIONS if with_ask or n != "ask"]
    for name in names:
        method = getattr(tools, name)

        def make(bound: Callable[..., dict[str, Any]]) -> Callable[..., Any]:
            @functools.wraps(bound)
            async def call(*args: Any, **kwargs: Any) -> dict[str, Any]:
                return await anyio.to_thread.run_sync(functools.partial(bound, *args, **kwargs))

            return call

        server.tool(name=name, description=TOOL_DESCRIPTIONS[name])(make(method))
    return server
