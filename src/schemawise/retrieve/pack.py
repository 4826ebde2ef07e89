"""The context pack's contract (docs/json.md, "ContextPack"): what `context --json` prints and
what the assistant, the MCP server and the benchmarks read."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class TableChoice(BaseModel):
    name: str
    score: float
    reasons: list[str] = Field(default_factory=list)


class ColumnChoice(BaseModel):
    table: str
    name: str
    tier: int  # 1 relevant, 2 potentially relevant (keys, enums)
    reason: str = ""
    # A few values the column holds, as written in the data (profiles), the question's first.
    values: list[str] = Field(default_factory=list)


class ContextPack(BaseModel):
    question: str
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
