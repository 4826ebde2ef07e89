"""The per-dialect function allow-lists (SECURITY.md L3), read from the text files beside this
module: one place that says which functions a query may call, for the static check and for
SQLite's runtime authorizer alike."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType

# The engines with a list of their own; sqlglot's dialect names and common spellings map here.
LIST_FILES = {
    "postgres": "postgres",
    "postgresql": "postgres",
    "sqlite": "sqlite",
    "sqlite3": "sqlite",
    "duckdb": "duckdb",
}
ENGINES = ("postgres", "sqlite", "duckdb")

# A reason starting with this marks SQL grammar (CAST, TRIM, COALESCE, …) rather than a
# catalogue function: the name is allowed only as written grammar, unquoted and unqualified,
# because `"coalesce"(x)` or `pg_catalog.coalesce(x)` looks up a real function of that name.
SYNTAX_MARK = "syntax:"

_NAME = re.compile(r"^[a-z_][a-z0-9_$]*$|^->>?$")


@dataclass(frozen=True)
class FunctionList:
    """The functions one dialect may call: name → the one-line reason it is safe."""

    dialect: str
    reasons: Mapping[str, str]

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self.reasons)

    @property
    def syntax(self) -> frozenset[str]:
        return frozenset(n for n, r in self.reasons.items() if r.startswith(SYNTAX_MARK))


def parse_list(text: str, source: str = "<list>") -> dict[str, str]:
    """`name  reason` lines; `#` starts a comment line. Malformed lines fail loudly: a typo
    must not silently drop or add a function."""
    entries: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 1)
        if len(parts) != 2:
            raise ValueError(f"{source}:{number}: expected `name  reason`, got {line!r}")
        name, reason = parts
        if not _NAME.match(name):
            raise ValueError(f"{source}:{number}: {name!r} is not a lower-case function name")
        if name in entries:
            raise ValueError(f"{source}:{number}: {name!r} is listed twice")
        entries[name] = reason.strip()
    return entries


@cache
def _engine_list(engine: str) -> FunctionList:
    # Beside this file (shipped as package data): read by path, not importlib.resources, so
    # that the sandbox's child, which imports this module without its package, can read it.
    text = (Path(__file__).parent / f"{engine}.txt").read_text(encoding="utf-8")
    entries = parse_list(text, f"{engine}.txt")
    return FunctionList(engine, MappingProxyType(entries))


@cache
def function_list(dialect: str) -> FunctionList:
    """The dialect's list. A dialect without a list of its own (mysql, bigquery, …) gets only
    the names every engine's list shares, with their reasons: fail closed, not open."""
    engine = LIST_FILES.get(dialect.lower())
    if engine is not None:
        return _engine_list(engine)
    lists = [_engine_list(e) for e in ENGINES]
    shared = set.intersection(*(set(fl.reasons) for fl in lists))
    first = lists[0].reasons
    return FunctionList(dialect.lower(), MappingProxyType({n: first[n] for n in sorted(shared)}))


def allowed_functions(dialect: str) -> frozenset[str]:
    """Every name the dialect's list allows (grammar names included)."""
    return function_list(dialect).names
