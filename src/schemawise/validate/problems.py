"""The Problem shape every check returns, and the fix loop feeds to a model."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class SqlProblem(BaseModel):
    """`{type, message, hint, …details}`: details vary by type (e.g. `tables_with_column`)."""

    model_config = ConfigDict(extra="allow")

    type: str
    message: str
    hint: str = ""

    @classmethod
    def of(cls, type_: str, message: str, hint: str = "", **details: Any) -> SqlProblem:
        return cls(type=type_, message=message, hint=hint, **details)
