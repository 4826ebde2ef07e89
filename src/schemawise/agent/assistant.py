"""The assistant as a library: `Assistant(...).ask(question)` → `Reply`.

One question: route it; for a question about the data, retrieve a context pack (wider, with
the model as ranker when that measures better), write SQL, take it through the gates with at
most two fixes, run it guarded, state the answer from the result. Every other intent is
answered from the index, the graph and the checks. Failures come back as a `Reply` with
`status: "failed"` and what was tried — never as a half-answer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from schemawise.agent import failures
from schemawise.agent.conversation import ConversationStore
from schemawise.agent.follow_up import (
    Subject,
    elsewhere,
    follows_text,
    not_searched,
    subject,
    subject_source,
)
from schemawise.agent.llm import HOW_TO_CONFIGURE, LLM
from schemawise.agent.researcher import SchemaLookup
from schemawise.agent.router import Intent, route
from schemawise.agent.writer import Database, Written, write_checked
from schemawise.db.guard import Limits
from schemawise.db.urls import without_redacted_password
from schemawise.errors import SchemawiseError
from schemawise.graph.model import SchemaGraph
from schemawise.retrieve.context import ContextPack, ContextSettings
from schemawise.retrieve.pack import SourceScore
from schemawise.retrieve.source_choice import close_calls

Status = Literal["answered", "failed", "no_model", "tables", "explained", "checked"]
PromptMode = Literal["context", "whole-schema"]
RankMode = Literal["auto", "model", "deterministic"]

# K_ret: how many tables retrieval may hand the model ranker, which keeps K_rnk (agent/rank).
WIDE_TABLES = 20
WIDE_CUTOFF = 0.15


class ResultShape(BaseModel):
    columns: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list)
    row_count: int = 0
    truncated: bool = False
    elapsed_ms: float = 0.0


class Failure(BaseModel):
    """What is missing when no answer came: enough to act on."""

    reason: str
    candidate_tables: list[str] = Field(default_factory=list)
    last_error: dict[str, Any] | None = None
    tried: list[str] = Field(default_factory=list)


class Reply(BaseModel):
    """`ask`'s JSON contract (docs/json.md)."""

    question: str
    intent: str
    status: Status
    source: str | None = None
    sql: str | None = None
    result: ResultShape | None = None
    answer: str = ""
    answer_source: str = ""  # model, template, empty, schema, checks
    tables: list[str] = Field(default_factory=list)
    columns: list[str] = Field(default_factory=list)
    assumptions: list[str] = Field(default_factory=list)
    explanation: str = ""
    warnings: list[dict[str, Any]] = Field(default_factory=list)
    errors: list[dict[str, Any]] = Field(default_factory=list)
    attempts: list[dict[str, Any]] = Field(default_factory=list)
    fixes: int = 0
    failure: Failure | None = None
    context: dict[str, Any] = Field(default_factory=dict)
    prompt: str | None = None  # the ready prompt, when no model is configured
    usage: dict[str, Any] = Field(default_factory=dict)
    conversation: str | None = None
    turn: int | None = None
    # A follow-up's subject: the earlier questions of the conversation it was read with, one
    # per line ("" for a question on its own, or one that began a new subject).
    follows: str = ""
    # Other databases that fit the question about as well as `source` (close calls): the
    # answer is from `source`; ask again with one of these as the source if it was meant.
    alternatives: list[SourceScore] = Field(default_factory=list)


@dataclass
class AskOptions:
    sources: list[str] | None = None
    evidence: str = ""
    run: bool = True
    limits: Limits = field(default_factory=lambda: Limits(max_rows=1000, timeout_seconds=30))
    tenant: Any = None
    max_fixes: int = 2
    prompt: PromptMode = "context"
    rank: RankMode = "auto"
    intent: Intent | None = None
    budget: int | None = None  # pack tokens
    answer: bool = True  # False: no sentence from the result (evaluation needs only the SQL)
    # The relevance floor (retrieve/relevance.py): say "nothing answers this" instead of
    # writing SQL over unrelated tables; on by default, as in `context`.
    relevance_floor: bool = True
    # The schema's lexicon (retrieve/lexicon.py): None as in `context`, on when more than one
    # database is searched.
    lexicon: bool | None = None
    # With a model and several databases searched: the model picks the database among the
    # close calls of the vote (retrieve/source_choice.py `second_opinion`). Off by default:
    # with the local 1.5B model it won synonym questions but lost more of SpiderUnion's
    # (docs/benchmarks.md, "The model picks the database").
    pick_source: bool = False


@dataclass
class Retrieved:
    pack: ContextPack
    graph: SchemaGraph
    url: str | None
    graphs: dict[str, SchemaGraph]
    metadata: Any = None
    seconds: float = 0.0


class Assistant:
    """Holds what outlives one question: the model, the index, the conversation store."""

    def __init__(
        self,
        llm: LLM | None = None,
        *,
        fast_llm: LLM | None = None,
        index_url: str | None = None,
        conversations: ConversationStore | None = None,
        failure_log: Path | Literal[False] | None = None,
    ) -> None:
        self.llm = llm
        self.fast_llm = fast_llm
        self._index_url = index_url
        self.conversations = conversations
        self.failure_log = failure_log

    @property
    def index_url(self) -> str:
        from schemawise.api import index_url_or_embedded

        self._index_url = index_url_or_embedded(self._index_url)
        return self._index_url

    # -- retrieval -----------------------------------------------------------------------------

    def _settings(self, llm: LLM | None, options: AskOptions) -> ContextSettings:
        use_model = options.rank == "model" or (
            options.rank == "auto" and llm is not None and not llm.small
        )
        from schemawise.retrieve.relevance import DEFAULT_FLOOR

        floor = DEFAULT_FLOOR if options.relevance_floor else None
        if llm is None or not use_model:
            return ContextSettings(
                budget=options.budget, relevance_floor=floor, lexicon=options.lexicon
            )
        return ContextSettings(
            max_tables=WIDE_TABLES, relative_cutoff=WIDE_CUTOFF, budget=options.budget,
            relevance_floor=floor, lexicon=options.lexicon,
        )  # fmt: skip

    def retrieve(self, question: str, options: AskOptions, llm: LLM | None = None,
                 follows: str = "") -> Retrieved:  # fmt: skip
        """The pack for the question (`follows`: a follow-up's earlier questions)."""
        from schemawise.index.connection import connect_index
        from schemawise.index.embed import get_embedder
        from schemawise.index.sources import list_sources, load_graphs, load_metadata
        from schemawise.retrieve.context import build_context

        settings = self._settings(llm, options)
        started = time.perf_counter()
        with connect_index(self.index_url) as conn:
            graphs = load_graphs(conn, options.sources)
            if settings.max_tables == WIDE_TABLES and llm is not None:
                from schemawise.agent.rank import column_filter, table_ranker

                ranking = self._ranking_llm(llm)
                settings = replace(settings, ranker=table_ranker(ranking, graphs),
                                   column_filter=column_filter(ranking))  # fmt: skip
            if llm is not None and options.pick_source and len(graphs) > 1:
                from schemawise.agent.rank import source_picker

                picker = source_picker(self._ranking_llm(llm), graphs)
                settings = replace(settings, source_picker=picker)
            metadata = load_metadata(conn, list(graphs))
            pack = build_context(
                conn, question, graphs, get_embedder(), evidence=options.evidence,
                sources=options.sources, settings=settings, metadata=metadata, follows=follows,
            )  # fmt: skip
            # Stored without their passwords: libpq takes them from PGPASSWORD or ~/.pgpass.
            urls = {s["source"]: without_redacted_password(s["url"]) for s in list_sources(conn)}
        source = pack.source or next(iter(graphs))
        return Retrieved(pack, graphs[source], urls.get(source), graphs, metadata.get(source),
                         time.perf_counter() - started)  # fmt: skip

    def _ranking_llm(self, llm: LLM) -> LLM:
        """The cheaper model for ranking when one is configured, its calls counted in the
        question's record and budget like the main model's."""
        if self.fast_llm is None:
            return llm
        fast = self.fast_llm
        return LLM(fast.model, fast.name, fast.small, llm.budget, llm.calls)

    def _search(self, options: AskOptions, source: str) -> Any:
        def search(words: str) -> list[str]:
            from schemawise import api

            # A lookup by meaning ("clients" finds customers), not a question: never floored.
            pack = api.context(words, sources=[source], index_url=self.index_url,
                               relevance_floor=False)  # fmt: skip
            return [t.name for t in pack.tables]

        return search

    # -- the intents ---------------------------------------------------------------------------

    def ask(self, question: str, *, conversation: str | None = None,
            options: AskOptions | None = None) -> Reply:  # fmt: skip
        options = options or AskOptions()
        llm = self.llm.fresh() if self.llm else None
        intent = options.intent or route(question, self.fast_llm.fresh() if self.fast_llm else None)
        handler = {
            "write_query": self._write_query,
            "find_tables": self._find_tables,
            "fix_query": self._fix_query,
            "explain_metadata": self._explain,
        }[intent]
        reply = handler(question, options, llm, conversation)
        reply.intent = intent
        if llm is not None:
            reply.usage = llm.usage()
        self._remember(reply, conversation)
        return reply

    def _remember(self, reply: Reply, conversation: str | None) -> None:
        if self.conversations is None or conversation is None:
            return
        reply.conversation = conversation
        reply.turn = self.conversations.add_turn(
            conversation, reply.question, reply.intent, reply.status, reply.sql,
            reply.result.columns if reply.result else None,
            reply.result.row_count if reply.result else None, reply.source, reply.follows,
        )  # fmt: skip

    def _subject(self, question: str, options: AskOptions, conversation: str | None) -> Subject:
        """What the question is read with as a follow-up of its conversation's subject, and
        what to tell the user about that (agent/follow_up.py)."""
        if self.conversations is None or conversation is None:
            return Subject()
        turns = subject(self.conversations.turns(conversation))
        source = subject_source(turns)
        if source is None:
            return Subject()  # no subject, or one no database answered: a first question
        following = Subject(turns, follows_text(turns), source)
        if options.sources and len(options.sources) == 1:
            return following if source in options.sources else not_searched(source)
        from schemawise.index.embed import get_embedder
        from schemawise.retrieve.relevance import DEFAULT_FLOOR

        if get_embedder().name != DEFAULT_FLOOR.embedder:
            return following  # no floor to read another database's questions by
        # Asked on its own, under the floor and without a model: which database is it about?
        # Without the lexicon, as the note was measured: with it, a short follow-up's few
        # unknown words pull it to whichever schema has a near word ("just the top 5" after
        # Chinook read as singers'), 3 more of the 21 fixture follow-ups noted wrongly.
        alone = self.retrieve(question, replace(options, relevance_floor=True, lexicon=False))
        if source not in alone.graphs:
            return not_searched(source)
        other = elsewhere(alone.pack, source, floor_applies=True)
        if other is None:
            return following
        return replace(following, notes=[
            f"Read as a follow-up of the earlier turns on {source}. On its own it reads as a "
            f"question about {other}: to ask that instead, start a new conversation (/new in "
            f"chat) or name it as the source."
        ])  # fmt: skip

    def _write_query(self, question: str, options: AskOptions, llm: LLM | None,
                     conversation: str | None) -> Reply:  # fmt: skip
        if options.prompt != "context":
            # The whole-schema prompt reads no pack, so an emptied one would leave it no database.
            options = replace(options, relevance_floor=False)
        about = self._subject(question, options, conversation)
        if about.follows and about.source:
            # A follow-up ("now split it by month") is read with its subject's questions, on the
            # subject's database (agent/follow_up.py).
            pinned = replace(options, sources=[about.source])
            retrieved = self.retrieve(question, pinned, llm, about.follows)
        else:
            retrieved = self.retrieve(question, options, llm)
        # Every turn of the subject, with its SQL where it has one (without a model, or after
        # a failed turn, the earlier questions still say what the follow-up builds on).
        history = [t.prior() for t in about.turns]
        pack, graph = retrieved.pack, retrieved.graph
        context = {"tables": [t.name for t in pack.tables], "tokens": pack.tokens,
                   "text": pack.text, "join_paths": pack.join_paths,
                   "seconds": round(retrieved.seconds, 3),
                   "source_chosen_by": pack.source_chosen_by,
                   # What a reader checks first when a table is missing from the answer.
                   "passed_over": [{"name": t.name, "left_out": t.left_out,
                                    "reason": t.reasons[0] if t.reasons else ""}
                                   for t in pack.passed_over],
                   "unknown_names": pack.unknown_names}  # fmt: skip
        schema_text = pack.text if options.prompt == "context" else whole_schema(graph)
        join_notes = [_join_note(p) for p in pack.join_paths] if options.prompt == "context" else []
        reply = Reply(question=question, intent="write_query", status="failed",
                      source=pack.source, context=context)  # fmt: skip
        reply.alternatives = close_calls(pack.alternatives)
        reply.assumptions = source_assumption(reply)
        reply.follows = about.follows
        reply.assumptions.extend(about.notes)
        if options.prompt == "context" and not pack.tables:
            # Nothing in the index is about the question: say so rather than have a model
            # write SQL against tables that have nothing to do with it.
            reply.answer = f"Nothing in the indexed databases answers this: {pack.empty_reason}."
            reply.answer += nearest_note(pack)
            reply.alternatives = []  # close calls beside a chosen database; there is none
            reply.failure = Failure(reason=reply.answer, candidate_tables=[])
            return reply
        if llm is None:
            from schemawise.agent.prompts import writer_instructions, writer_prompt

            reply.status = "no_model"
            ready = writer_prompt(question, schema_text, evidence=options.evidence,
                                  join_notes=join_notes, history=history,
                                  missing=pack.unknown_names)  # fmt: skip
            reply.prompt = writer_instructions(graph.dialect or "postgres") + "\n\n" + ready
            reply.failure = Failure(reason="No language model is configured. " + HOW_TO_CONFIGURE,
                                    candidate_tables=[t.name for t in pack.tables])  # fmt: skip
            return reply
        db = Database(graph, graph.dialect or "postgres", retrieved.url, pack.source,
                      options.tenant)  # fmt: skip
        lookup = SchemaLookup(graph, self._search(options, pack.source) if pack.source else None)
        written = write_checked(
            llm, question, schema_text, db, evidence=options.evidence, join_notes=join_notes,
            searchable=_searchable(retrieved.url, graph), history=history,
            missing=pack.unknown_names, lookup=lookup,
            run=options.run and retrieved.url is not None, limits=options.limits,
            max_fixes=options.max_fixes,
        )  # fmt: skip
        self._fill(reply, written, llm, question, options)
        self._log(reply, written, pack)
        return reply

    def _fill(self, reply: Reply, written: Written, llm: LLM, question: str,
              options: AskOptions) -> None:  # fmt: skip
        from schemawise.agent.answer import answer_in_words

        reply.attempts = [a.to_dict() for a in written.attempts]
        reply.fixes = written.fixes
        if written.draft is not None:
            reply.sql = written.draft.query
            # What the writer assumed, then what was assumed before it wrote (the database).
            reply.assumptions = [*written.draft.assumptions, *reply.assumptions]
            reply.explanation = written.draft.explanation
        check = written.check
        if check is not None:
            reply.tables, reply.columns = check.tables, check.columns
            reply.warnings = [w.model_dump() for w in [*check.warnings, *check.fanout]]
            reply.errors = [e.model_dump() for e in check.errors]
        if written.run is not None and written.run.error is not None:
            reply.errors.append(written.run.error.model_dump())
        if not written.ok:
            last = written.attempts[-1].problems[0].model_dump() if (
                written.attempts and written.attempts[-1].problems) else None  # fmt: skip
            reply.failure = Failure(reason=written.failure or "unknown",
                                    candidate_tables=reply.context.get("tables", []),
                                    last_error=last,
                                    tried=[a.sql for a in written.attempts])  # fmt: skip
            return
        outcome = written.run
        if outcome is None or outcome.result is None:
            reply.status = "checked"  # --no-run: the SQL passed the checks, nothing ran
            reply.answer, reply.answer_source = (
                "The SQL passed every check; it was not run.",
                "checks",
            )
            return
        result = outcome.result
        reply.result = ResultShape(
            columns=list(result.columns), rows=[list(r) for r in result.rows],
            row_count=len(result.rows), truncated=result.truncated, elapsed_ms=result.elapsed_ms,
        )  # fmt: skip
        if not options.answer:
            reply.status = "answered"
            return
        said = answer_in_words(llm, question, reply.sql or "", result.columns, result.rows,
                               len(result.rows), result.truncated)  # fmt: skip
        reply.answer, reply.answer_source = said.text, said.source
        if said.unsupported_numbers:
            reply.warnings.append({"type": "answer_numbers",
                                   "message": "The model's answer had numbers not in the result "
                                   f"({', '.join(said.unsupported_numbers)}); the result is "
                                   "stated instead.", "hint": ""})  # fmt: skip
        reply.status = "answered"

    def _log(self, reply: Reply, written: Written, pack: ContextPack) -> None:
        if self.failure_log is False or (written.ok and written.fixes == 0):
            return
        failures.record(
            {
                "question": reply.question, "source": reply.source,
                "outcome": "fixed" if written.ok else "failed",
                "pack_tables": [t.name for t in pack.tables],
                "attempts": reply.attempts, "sql": reply.sql,
                "error_classes": sorted({p["type"] for a in reply.attempts for p in a["problems"]}),
            },
            self.failure_log or None,
        )  # fmt: skip

    def _find_tables(self, question: str, options: AskOptions, llm: LLM | None,
                     conversation: str | None) -> Reply:  # fmt: skip
        retrieved = self.retrieve(question, options, None)
        pack = retrieved.pack
        lines = [f"{t.name}: {'; '.join(t.reasons)}" for t in pack.tables]
        why = f": {pack.empty_reason}" if pack.empty_reason else ""
        # Close calls beside a chosen database; an emptied pack chose none.
        runners_up = close_calls(pack.alternatives) if pack.source else []
        reply = Reply(question=question, intent="find_tables", status="tables",
                      source=pack.source, tables=[t.name for t in pack.tables],
                      answer="\n".join(lines) or f"No table matches{why}.{nearest_note(pack)}",
                      answer_source="schema",
                      context={"tables": [t.name for t in pack.tables], "tokens": pack.tokens,
                               "join_paths": pack.join_paths},
                      alternatives=runners_up)  # fmt: skip
        reply.assumptions = source_assumption(reply)
        return reply

    def _explain(self, question: str, options: AskOptions, llm: LLM | None,
                 conversation: str | None) -> Reply:  # fmt: skip
        from schemawise.agent.about import about

        # About the schema itself ("what does status mean?"): nothing to floor.
        retrieved = self.retrieve(question, replace(options, relevance_floor=False), None)
        said = about(question, retrieved.graph, retrieved.metadata)
        if said is None:  # nothing named: the pack's best tables and how they join
            said = "\n".join(f"{t.name}: {'; '.join(t.reasons)}" for t in retrieved.pack.tables)
            said += "".join(f"\n{_join_note(p)}" for p in retrieved.pack.join_paths)
        return Reply(question=question, intent="explain_metadata", status="explained",
                     source=retrieved.pack.source, answer=said, answer_source="schema",
                     tables=[t.name for t in retrieved.pack.tables])  # fmt: skip

    def _fix_query(self, question: str, options: AskOptions, llm: LLM | None,
                   conversation: str | None) -> Reply:  # fmt: skip
        from schemawise.agent.draft import UnreadableReplyError, read_draft
        from schemawise.validate.check import check_sql

        try:
            sql = read_draft(question).query
        except UnreadableReplyError:
            sql = ""
        # The pasted SQL says what it is about: the floor would leave it no database to check.
        retrieved = self.retrieve(question, replace(options, relevance_floor=False), None)
        graph = retrieved.graph
        reply = Reply(question=question, intent="fix_query", status="checked",
                      source=retrieved.pack.source, sql=sql or None)  # fmt: skip
        if not sql:
            reply.status = "failed"
            reply.failure = Failure(reason="No SQL found in the message: paste the query "
                                    "(SELECT … or WITH …) with the error.")  # fmt: skip
            return reply
        check = check_sql(sql, graph, fanout="auto")
        reply.tables, reply.columns = check.tables, check.columns
        reply.errors = [e.model_dump() for e in check.errors]
        reply.warnings = [w.model_dump() for w in [*check.warnings, *check.fanout]]
        explained = [f"{e.type}: {e.message} {e.hint}".strip() for e in check.errors]
        reply.answer = "\n".join(explained) or "The SQL passes every check."
        reply.answer_source = "checks"
        if check.ok or llm is None:
            return reply
        db = Database(graph, graph.dialect or "postgres", retrieved.url,
                      retrieved.pack.source, options.tenant)  # fmt: skip
        try:
            written = write_checked(
                llm, "Repair this query so it passes the checks and keeps its meaning:\n" + sql,
                whole_schema(graph) if len(graph.tables) <= 30 else retrieved.pack.text, db,
                run=False, max_fixes=options.max_fixes,
                lookup=SchemaLookup(graph),
            )  # fmt: skip
        except SchemawiseError:
            return reply
        if written.ok and written.draft is not None:
            reply.answer += f"\nFixed:\n{written.draft.query}"
            reply.explanation = written.draft.explanation
            reply.attempts = [a.to_dict() for a in written.attempts]
            reply.fixes = written.fixes
        return reply


def nearest_note(pack: ContextPack) -> str:
    """For a pack the relevance floor emptied: the databases the question came nearest to,
    and how to ask one anyway (the floor applies to a named source too)."""
    if pack.source is not None or not pack.alternatives:
        return ""
    nearest = ", ".join(a.source for a in pack.alternatives)
    return (f" Nearest: {nearest}; none is close enough. To ask one anyway, name it as the "
            "source with the relevance floor off (on the command line: --source S "
            "--no-relevance-floor).")  # fmt: skip


def source_assumption(reply: Reply) -> list[str]:
    """The database choice as an assumption to verify, when another fits about as well (and
    the pack found something: an empty one says nothing answers)."""
    if not reply.alternatives or reply.source is None or not reply.context.get("tables"):
        return []
    others = ", ".join(
        # Above 1: a runner-up the vote preferred, passed over by the model's pick.
        f"{a.source} (its vote {a.score:.2f}× this one's)" if a.score > 1
        else f"{a.source} (fits {a.score:.2f} as well)"
        for a in reply.alternatives
    )  # fmt: skip
    first = reply.alternatives[0].source
    how = " (the model's pick)" if reply.context.get("source_chosen_by") == "model" else ""
    return [
        f"the question is taken to be about {reply.source}{how}, though {others}; if {first} "
        f"was meant, ask again with it as the source (--source {first}; in chat, /source {first})"
    ]


def _join_note(path: dict[str, Any]) -> str:
    from schemawise.graph.paths import JoinPath

    return JoinPath.model_validate(path).render().replace("\n", "; ")


def _searchable(url: str | None, graph: SchemaGraph) -> list[str]:
    """Tables with row search enabled (Postgres sources): the writer may use sw_match there."""
    if url is None or not graph.dialect or graph.dialect != "postgres":
        return []
    try:
        import psycopg

        from schemawise.rows.config import all_configs
        from schemawise.runner import resolve_target

        target = resolve_target(url)
        with psycopg.connect(target.admin or target.location, connect_timeout=5) as conn:
            return [c.table for c in all_configs(conn)]
    except (SchemawiseError, Exception):  # row search is optional: without it, no sw_match
        return []


def whole_schema(graph: SchemaGraph) -> str:
    """Every table as CREATE TABLE with its keys: the baseline prompt the context pack is
    measured against (`eval --prompt whole-schema`)."""
    blocks = []
    for table in graph.tables:
        lines = [f"  {c.name} {c.type}" for c in table.columns]
        if table.primary_key:
            lines.append(f"  PRIMARY KEY ({', '.join(table.primary_key)})")
        for edge in graph.edges:
            if edge.child_table == table.name and edge.source == "foreign_key":
                lines.append(f"  FOREIGN KEY ({', '.join(edge.child_columns)}) REFERENCES "
                             f"{edge.parent_table} ({', '.join(edge.parent_columns)})")  # fmt: skip
        blocks.append(f"CREATE TABLE {table.name} (\n" + ",\n".join(lines) + "\n);")
    return "\n".join(blocks)
