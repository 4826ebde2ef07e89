"""Opening the index: a server that is not there, or a URL that is not one, is the user's to
fix, so it is an error with a hint (exit 2), never a traceback."""

from __future__ import annotations

from typing import Any

import psycopg

from schemawise.db.urls import redact
from schemawise.errors import ConnectionFailedError


def connect_index(url: str, **options: Any) -> psycopg.Connection[Any]:
    """A connection to the index at `url` (a Postgres URL), or ConnectionFailedError."""
    try:
        return psycopg.connect(url, **options)
    except (psycopg.OperationalError, psycopg.ProgrammingError) as exc:  # also a malformed URL
        raise ConnectionFailedError(
            f"Could not open the index at {redact(url)}: {str(exc).strip()}",
            "Check --index-url: a postgresql:// URL of a running server (with pgvector) the "
            "user may log in to. Without it schemawise starts its own embedded Postgres.",
        ) from exc
