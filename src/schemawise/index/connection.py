"""Opening the index: a server that is not there, or a URL that is not one, is the user's to
fix, so it is an error with a hint (exit 2), never a traceback."""

from __future__ import annotations

from typing import Any

import psycopg

from schemawise.db.postgres import connect_explained


def connect_index(url: str, **options: Any) -> psycopg.Connection[Any]:
    """A connection to the index at `url` (a Postgres URL), or ConnectionFailedError."""
    return connect_explained(
        url, "Could not open the index at",
        "Check --index-url: a postgresql:// URL of a running server (with pgvector) the user may "
        "log in to. Without it schemawise starts its own embedded Postgres.",
        **options,
    )  # fmt: skip
