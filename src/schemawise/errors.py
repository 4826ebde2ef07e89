"""Every error a user can hit: a message saying what failed and a hint saying what to do."""

from __future__ import annotations


class SchemawiseError(Exception):
    """Base class: a user-facing error with a hint."""

    exit_code = 2

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def to_dict(self) -> dict[str, str]:
        return {"type": type(self).__name__, "message": self.message, "hint": self.hint}


class InvalidURLError(SchemawiseError):
    """The database URL is malformed or names an unsupported scheme."""


class ConnectionFailedError(SchemawiseError):
    """The database could not be reached or opened."""


class NotADatabaseError(SchemawiseError):
    """The file exists but is not a database of the kind its URL says."""


class PermissionDeniedError(SchemawiseError):
    """The database refused an operation for lack of privilege."""


class TableNotFoundError(SchemawiseError):
    """A table named by the user does not exist in the graph."""


class NoJoinPathError(SchemawiseError):
    """Tables that no chain of edges connects."""


class EmbeddedDatabaseError(SchemawiseError):
    """The embedded PostgreSQL could not be started, stopped or found."""


class BenchmarkDataError(SchemawiseError):
    """Benchmark input that is missing or not in the expected layout."""


class ModelNotConfiguredError(SchemawiseError):
    """A command needs a language model and none is configured."""


class ModelCallError(SchemawiseError):
    """A language model could not be reached, refused, or ran over its budget."""


class ModelUnreachableError(ModelCallError):
    """The model's endpoint did not answer at all: nothing listens there, or its server stopped."""


class LocalModelError(SchemawiseError):
    """The local model could not be installed, verified, started, reached or stopped."""


class GoldenSetError(SchemawiseError):
    """A golden set (questions with gold SQL) that is missing, malformed or inconsistent."""
