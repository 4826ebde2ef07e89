"""Database URLs: what a user may type, and what it names."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import unquote

from schemawise.errors import InvalidURLError

Kind = Literal["postgres", "sqlite", "duckdb", "embedded"]

EXAMPLES = (
    "postgresql://user:password@host:5432/dbname, sqlite:///path/to/file.sqlite, "
    "duckdb:///path/to/file.duckdb, 'embedded' for schemawise's own database, or "
    "embedded/<name> for another database of the embedded server"
)
_DATABASE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


@dataclass(frozen=True)
class ParsedURL:
    kind: Kind
    # The URL for Postgres, the file path for SQLite and DuckDB, and for the embedded server
    # the database's name ("" for schemawise's own).
    target: str


def _file_path(rest: str) -> str:
    # sqlite:///abs/path and sqlite:////abs/path both mean /abs/path when the relative reading
    # names no file: people type three slashes for absolute paths far more often than not.
    path = Path(rest)
    if not path.is_absolute() and not path.exists() and Path("/" + rest).exists():
        return "/" + rest
    return rest


def parse_url(url: str) -> ParsedURL:
    url = url.strip()
    if not url:
        raise InvalidURLError("The database URL is empty.", f"Give a URL such as {EXAMPLES}.")
    lowered = url.lower()
    if lowered in {"embedded", "demo"}:
        return ParsedURL("embedded", "")
    if lowered.startswith("embedded/"):
        # Another database of the embedded server: its name, checked like an identifier.
        database = url[len("embedded/") :]
        if not _DATABASE_NAME.fullmatch(database):
            raise InvalidURLError(
                f"{database!r} is not a database name.",
                "Write embedded/<name> with letters, digits and underscores, e.g. embedded/sales.",
            )
        return ParsedURL("embedded", database)
    if lowered.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
        return ParsedURL("postgres", url.replace("postgresql+psycopg://", "postgresql://", 1))
    for prefix, kind in (("sqlite:///", "sqlite"), ("duckdb:///", "duckdb")):
        if lowered.startswith(prefix):
            return ParsedURL(kind, _file_path(url[len(prefix) :]))  # type: ignore[arg-type]
    suffix = Path(url).suffix.lower()
    if suffix in {".sqlite", ".sqlite3", ".db"}:
        return ParsedURL("sqlite", url)
    if suffix == ".duckdb":
        return ParsedURL("duckdb", url)
    # Redacted: a URL of an unsupported kind may still carry a password (mysql://u:pw@h).
    raise InvalidURLError(f"Unsupported database URL: {redact(url)!r}.", f"Use one of: {EXAMPLES}.")


def missing_file(path: str) -> str:
    """Where a file that is not there was looked for: a relative path by its absolute reading
    too, since `sqlite:///tmp/x.sqlite` may mean either."""
    if Path(path).is_absolute():
        return path
    here = f"{path} (from {Path.cwd()})"
    # Only a path with a directory part may have been meant as absolute (`tmp/x.sqlite`), not
    # a bare file name or one that climbs (`../x.sqlite`).
    if "/" not in path or path.startswith("."):
        return here
    return f"{here}, nor at /{path}"


def absolute_url(url: str) -> str:
    """The URL with a SQLite or DuckDB file named by its absolute path (`sqlite:////abs`), so
    that what is stored with an index (`sync`, `check`) names the same file from any
    directory; any other URL, or a file that is not there, as given."""
    try:
        parsed = parse_url(url)
    except InvalidURLError:
        return url
    if parsed.kind not in ("sqlite", "duckdb") or not Path(parsed.target).exists():
        return url
    # abspath, not resolve: a link stays the link (a `current.sqlite` pointed at each new
    # file is synced from whatever it points at then).
    return f"{parsed.kind}:///{os.path.abspath(parsed.target)}"


# A password given as a parameter: `?password=…` (or `sslpassword`, the client key's) in a URL,
# up to the next `&`; `password=…` in a key/value string, up to the next space, or quoted with
# `\'` escapes inside (libpq's key/value syntax, where `&` is part of the value).
_PASSWORD_URL_PARAMETER = re.compile(r"([?&](?:ssl)?password=)([^&#]*)", re.IGNORECASE)
_PASSWORD_PARAMETER = re.compile(
    r"((?<![\w%])(?:ssl)?password\s*=\s*)('(?:\\.|[^'\\])*'|\S*)", re.IGNORECASE
)


def _authority(url: str) -> tuple[str, str, str, str] | None:
    """`scheme://credentials@host/rest` split as (scheme, credentials, host, rest); None when
    the URL names no user. The authority ends at the first `/`, as libpq reads it: a password
    may hold `?` or `#` (`u:s3cr?t@h/db`), and an `@` after the `/` (`?user=alice@corp`) is no
    user's."""
    if "://" not in url:
        return None
    scheme, after = url.split("://", 1)
    end = after.find("/") if "/" in after else len(after)
    authority, rest = after[:end], after[end:]
    if "@" not in authority:
        return None
    credentials, host = authority.rsplit("@", 1)
    return scheme, credentials, host, rest


def redact(url: str) -> str:
    """The URL (or key/value connection string) without its password, for output and error
    messages."""
    if "://" in url:
        # Parameter names may be percent-encoded (`pass%77ord`): libpq decodes them.
        url = re.sub(r"([?&])([^=&#]*%[^=&#]*)=", lambda m: m.group(1) + unquote(m.group(2)) + "=",
                     url)  # fmt: skip
        url = _PASSWORD_URL_PARAMETER.sub(r"\1***", url)
    else:
        url = _PASSWORD_PARAMETER.sub(r"\1***", url)
    parts = _authority(url)
    if parts is None or ":" not in parts[1]:
        return url
    scheme, credentials, host, rest = parts
    return f"{scheme}://{credentials.split(':', 1)[0]}:***@{host}{rest}"


# What `redact` puts in a password's place; the index stores source URLs redacted.
REDACTED = "***"


def without_redacted_password(url: str) -> str:
    """A stored URL whose password was removed (`user:***@host`, `?password=***`) without the
    placeholder (`user@host`): libpq then takes the password from PGPASSWORD, PGPASSFILE or
    ~/.pgpass, as a cron job or a server would keep it. Any other URL as given."""
    url = re.sub(rf"([?&])(?:ssl)?password={re.escape(REDACTED)}(&|$)", _keep_separator, url)
    parts = _authority(url)
    if parts is None or not parts[1].endswith(":" + REDACTED):
        return url
    scheme, credentials, host, rest = parts
    return f"{scheme}://{credentials[: -len(REDACTED) - 1]}@{host}{rest}"


def same_stored_url(first: str, second: str) -> bool:
    """Two stored URLs of one database, whether or not a password was given (and redacted) in
    either: `user:***@host/db` and `user@host/db` are one."""

    def key(url: str) -> str:
        # `postgres://` is `postgresql://` to libpq.
        plain = without_redacted_password(redact(url))
        return re.sub(r"^postgres://", "postgresql://", plain, flags=re.IGNORECASE)

    return key(first) == key(second)


def _keep_separator(match: re.Match[str]) -> str:
    # `?password=***&a=1` → `?a=1`; `?a=1&password=***&b=2` → `?a=1&b=2`;
    # `?a=1&password=***` → `?a=1`; `?password=***` → ``
    first, after = match.group(1), match.group(2)
    return first if after else ""


def password_hint(url: str) -> str:
    """Where libpq looks for a password the URL does not carry: said when a login fails."""
    if not url.lower().startswith(("postgresql://", "postgres://")) and "=" not in url:
        return ""
    parts = _authority(url)
    has_password = bool(_PASSWORD_PARAMETER.search(url)) or (parts is not None and ":" in parts[1])
    if has_password:
        return ""
    return (
        " The URL carries no password (the index stores URLs without theirs): set PGPASSWORD, "
        "or add a line for this host, port, database and user to ~/.pgpass (or PGPASSFILE), "
        "or give the full URL."
    )
