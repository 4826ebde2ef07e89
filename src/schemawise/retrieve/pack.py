"""The context pack's contract (docs/json.md, "ContextPack"): what `context --json` prints and
what the assistant, the MCP server and the benchmarks read."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from schemawise.rank.structural import LeftOut
from schemawise.retrieve.relevance import Relevance


class TableChoice(BaseModel):
    name: str
    score: float
    reasons: list[str] = Field(default_factory=list)
    # What the table is, as the team wrote it (dbt, the overlay, a dictionary, a model's
    # description) or its database comment; cut to DESCRIPTION_CHARS. "" when nothing says.
    description: str = ""
    # Only in `passed_over`: why the table is not in the pack.
    left_out: LeftOut | None = None


class ColumnChoice(BaseModel):
    table: str
    name: str
    tier: int  # 1 relevant, 2 potentially relevant (keys, enums)
    reason: str = ""
    # A few values the column holds, as written in the data (profiles), the question's first.
    values: list[str] = Field(default_factory=list)
    # What the metadata says the column is, when its database comment does not say it
    # already (the comment is shown from the schema); cut to DESCRIPTION_CHARS.
    description: str = ""


# What a token budget can take out of a pack, in the order it does (retrieve/budget.py).
DroppedKind = Literal[
    "example", "values", "value_mapping", "description", "column", "definition", "table"
]


class DroppedPart(BaseModel):
    kind: DroppedKind
    # The example's question, `table.column` for values, value meanings and columns, the
    # definition's term, the table's name.
    name: str


class SourceScore(BaseModel):
    source: str
    # Its vote relative to the chosen database's (1.0: the question is as much about it).
    score: float


# How many runners-up a pack names.
ALTERNATIVES = 3
# A description in the pack is a hint of what a table or column means, not its documentation:
# longer ones are cut at a word, with "…".
DESCRIPTION_CHARS = 160


def short_description(text: str | None) -> str:
    """`text` on one line, cut at a word before DESCRIPTION_CHARS."""
    flat = " ".join((text or "").split())
    if len(flat) <= DESCRIPTION_CHARS:
        return flat
    cut = flat[: DESCRIPTION_CHARS - 1].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "…"


class ContextPack(BaseModel):
    question: str
    # A follow-up turn's earlier question, read with it (retrieve/context.py); "" for a question
    # on its own.
    follows: str = ""
    source: str | None = None
    schema_version: str = ""
    tables: list[TableChoice] = Field(default_factory=list)
    columns: list[ColumnChoice] = Field(default_factory=list)
    join_paths: list[dict[str, Any]] = Field(default_factory=list)
    definitions: list[str] = Field(default_factory=list)
    value_mappings: dict[str, Any] = Field(default_factory=dict)
    examples: list[str] = Field(default_factory=list)
    text: str = ""
    tokens: int = 0
    budget: int | None = None  # the token budget asked for, if any
    truncated: bool = False  # the budget took something out: see `dropped`
    dropped: list[DroppedPart] = Field(default_factory=list)
    # Even the smallest honest pack (the first table with its keys) is over the budget.
    over_budget: bool = False
    # How well the chosen database matches the question (the relevance floor's measures);
    # None when no database matched at all.
    relevance: Relevance | None = None
    # Why the pack is empty, when it is: nothing matched, or nothing close enough.
    empty_reason: str | None = None
    # With several databases searched: the next best, so that a caller can ask when one is
    # about as likely as the chosen one.
    alternatives: list[SourceScore] = Field(default_factory=list)
    # "vote": the database with the best vote; "model": a model picked it among close calls
    # (ContextSettings.source_picker), so a runner-up the vote preferred scores above 1.
    source_chosen_by: Literal["vote", "model"] = "vote"
    # The best candidate tables of the chosen database left out, each with why it was (its first
    # reason: under the cut, the pack full, no word of its own) and what matched it: to tell a
    # table that nearly made it from one nothing found. Not part of the text.
    passed_over: list[TableChoice] = Field(default_factory=list)
    # Names the question writes as a table or column (`loyalty_points`, `crm.leads`) that the
    # chosen database does not have (retrieve/unknown_names.py): the pack holds the nearest
    # tables, which may not be what was asked about.
    unknown_names: list[str] = Field(default_factory=list)
