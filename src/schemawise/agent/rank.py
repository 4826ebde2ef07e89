"""The model as a second opinion on the context engine's choices (seed 004's ranker): tables
scored 1–10 with a reason from their names, descriptions and the retrieval's reasons — not
their full schemas — and the tier-2 columns kept or dropped. Each falls back to the
deterministic choice when the model fails or answers nothing usable."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from schemawise.errors import ModelCallError, ModelUnreachableError
from schemawise.graph.families import collapsed
from schemawise.graph.model import SchemaGraph
from schemawise.prune.columns import ColumnFilter, ColumnPick
from schemawise.rank.structural import Candidate, Ranker
from schemawise.retrieve.source_choice import SourcePicker

KEEP_TABLES = 7  # K_rnk: the tables the writer sees at most
KEEP_SCORE = 5  # a table scored below this (of 10) is dropped


def _about(graph: SchemaGraph, candidate: Candidate) -> str:
    table = graph.table(candidate.table)
    parts = []
    if table is not None and table.comment:
        parts.append(table.comment)
    if table is not None:
        parts.append("columns " + ", ".join(c.name for c in table.columns[:25]))
    if candidate.reasons:
        parts.append("matched: " + "; ".join(candidate.reasons[:3]))
    return " | ".join(parts)


def read_scores(text: str) -> dict[str, tuple[int, str]]:
    """{table: (score, reason)} from the ranker's JSON reply; {} when unreadable."""
    from schemawise.agent.draft import json_objects

    scores: dict[str, tuple[int, str]] = {}
    for data in json_objects(text):
        entries = data.get("tables")
        if not isinstance(entries, list):
            continue
        for entry in entries:
            if not isinstance(entry, dict) or "name" not in entry:
                continue
            try:
                score = int(entry.get("score", 0))
            except (TypeError, ValueError):
                continue
            scores[str(entry["name"])] = (score, str(entry.get("reason", "")))
    return scores


def rerank(
    candidates: Sequence[Candidate], scores: dict[str, tuple[int, str]], keep: int = KEEP_TABLES
) -> list[Candidate]:
    """Candidates the model scored at least KEEP_SCORE, by its score then the engine's order;
    the engine's first choice when the model kept none."""
    order = {c.table: i for i, c in enumerate(candidates)}
    kept = [c for c in candidates if scores.get(c.table, (0, ""))[0] >= KEEP_SCORE]
    kept.sort(key=lambda c: (-scores[c.table][0], order[c.table]))
    for candidate in kept:
        reason = scores[candidate.table][1]
        candidate.reasons.append(f"model: {scores[candidate.table][0]}/10 {reason}".strip())
    return kept[:keep] or list(candidates[:1])


def table_ranker(llm: Any, graph_for: dict[str, SchemaGraph]) -> Ranker:
    """A Ranker for ContextSettings: the model scores the engine's candidates."""
    from schemawise.agent.prompts import RANKER_INSTRUCTIONS, ranker_prompt

    def rank(question: str, candidates: list[Candidate]) -> list[Candidate]:
        if len(candidates) <= 1:
            return candidates
        graph = _graph_with(graph_for, candidates)
        if graph is None:
            return candidates
        listed = [(c.table, _about(graph, c)) for c in candidates]
        try:
            reply = llm.run("rank", RANKER_INSTRUCTIONS, ranker_prompt(question, listed))
        except ModelCallError:
            return candidates
        scores = read_scores(str(reply))
        return rerank(candidates, scores) if scores else candidates

    return rank


def _graph_with(
    graphs: dict[str, SchemaGraph], candidates: Sequence[Candidate]
) -> SchemaGraph | None:
    for graph in graphs.values():
        if graph.table(candidates[0].table) is not None:
            return graph
    return None


COLUMN_INSTRUCTIONS = """\
You choose the columns a SQL query needs. From the optional columns listed, reply with one \
JSON object {"columns": ["table.column", ...]} naming those the question needs."""


def column_filter(llm: Any) -> ColumnFilter:
    """Tier 1 (named by the question, keys) stays; the model keeps or drops tier 2."""

    def keep(question: str, picks: list[ColumnPick]) -> list[ColumnPick]:
        optional = [p for p in picks if p.tier > 1]
        if not optional:
            return picks
        listed = "\n".join(f"- {p.table}.{p.name}" for p in optional)
        try:
            reply = str(llm.run("rank_columns", COLUMN_INSTRUCTIONS,
                                f"Question: {question}\nOptional columns:\n{listed}"))  # fmt: skip
        except ModelCallError:
            return picks
        chosen = _chosen_columns(reply)
        if chosen is None:
            return picks
        return [p for p in picks if p.tier <= 1 or f"{p.table}.{p.name}".lower() in chosen]

    return keep


def _chosen_columns(text: str) -> set[str] | None:
    from schemawise.agent.draft import json_objects

    for data in json_objects(text):
        names = data.get("columns")
        if isinstance(names, list):
            return {str(n).lower() for n in names}
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return {str(n).lower() for n in value} if isinstance(value, list) else None


SOURCE_INSTRUCTIONS = """\
You choose the database a question is about. Each database is listed with its tables and some \
of their columns, in the order a search ranked them: the first is the likeliest. Name another \
only when what the question asks about is plainly among its tables and not among the first's. \
Reply with one JSON object {"database": "<name>"}, the name spelled as listed."""

# What the picker sees of each database: enough names to tell the subjects apart, few enough
# that three warehouses fit a small model's prompt.
SOURCE_TABLES = 25
SOURCE_COLUMNS = 6
COMMENT_CHARACTERS = 150


def describe_source(name: str, graph: SchemaGraph) -> str:
    """One line per table: its name and first columns (keys and names come first in most
    schemas), the table's comment when it has one."""
    lines = [f"database {name}:"]
    for table in graph.tables[:SOURCE_TABLES]:
        columns = ", ".join(c.name for c in table.columns[:SOURCE_COLUMNS])
        more = ", …" if len(table.columns) > SOURCE_COLUMNS else ""
        # A comment is the database's text, not an instruction: one line, and short, so that
        # it can neither forge another database's entry nor crowd out the others.
        comment = " ".join((table.comment or "").split())[:COMMENT_CHARACTERS]
        about = f" -- {comment}" if comment else ""
        lines.append(f"  {table.name} ({columns}{more}){about}")
    if len(graph.tables) > SOURCE_TABLES:
        lines.append(f"  … and {len(graph.tables) - SOURCE_TABLES} more tables")
    return "\n".join(lines)


def read_source(text: str, candidates: Sequence[str]) -> str | None:
    """The candidate the reply names ({"database": …}, or the bare name; a name without its
    prefix counts when one candidate alone ends so), or None when it names none of them."""
    from schemawise.agent.draft import json_objects  # draft.py imports the prompts: no cycle

    named = [str(d.get("database", "")) for d in json_objects(text)]
    named = [n for n in named if n] or [text]
    for said in named:
        said = said.strip().strip("\"'` ").lower()
        exact = [c for c in candidates if c.lower() == said]
        short = [c for c in candidates if c.rsplit("/", 1)[-1].lower() == said]
        if exact or len(short) == 1:
            return (exact or short)[0]
    return None


def source_picker(
    llm: Any, graphs: dict[str, SchemaGraph], *, fail_fast: bool = False
) -> SourcePicker:
    """A SourcePicker for ContextSettings: the model picks among the close databases; None
    (the vote's choice stands) when it fails or names none of them. `fail_fast`: a model that
    cannot be reached raises instead (a benchmark must not pass off the vote as the model's)."""

    def pick(question: str, candidates: list[str]) -> str | None:
        # One entry per sharded family, as retrieval sees them: shards would fill the list.
        listed = "\n".join(
            describe_source(c, collapsed(graphs[c])) for c in candidates if c in graphs
        )
        try:
            reply = llm.run("pick_source", SOURCE_INSTRUCTIONS,
                            f"Question: {question}\n\n{listed}")  # fmt: skip
        except ModelUnreachableError:
            if fail_fast:
                raise
            return None
        except ModelCallError:
            return None
        return read_source(str(reply), candidates)

    return pick
