"""The function allow-lists (validate/functions/*.txt): well-formed, free of the functions
that must never be listed, shared with SQLite's authorizer, and no false refusal of the
benchmarks' gold SQL."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from sqlglot.dialects.dialect import Dialect

from schemawise.db import sqlite_policy
from schemawise.validate.functions import (
    SYNTAX_MARK,
    allowed_functions,
    function_list,
    parse_list,
)
from schemawise.validate.safety import check_safety

ENGINES = ("postgres", "sqlite", "duckdb")
# Reserved words that can name a function only quoted (SQLite calls `any(x)` a function).
RESERVED = {
    "postgres": frozenset({"case", "any", "variadic"}),
    "duckdb": frozenset({"case", "any", "variadic"}),
    "sqlite": frozenset({"case"}),
}

# Names that reach settings, files, server state, other sessions, sequences, locks, sleeps or
# SQL text. Listing one of these is a bug whatever its reason says.
NEVER = re.compile(
    r"^(pg_.*|ts_stat|ts_rewrite|ts_debug|ts_lexize|ts_parse|query|query_table|query_to_xml.*"
    r"|cursor_to_xml.*|table_to_xml.*|schema_to_xml.*|database_to_xml.*|dblink.*|lo_.*"
    r"|current_setting|set_config|setseed|nextval|currval|setval|lastval|txid_.*|mxid_age"
    r"|read_.*|.*_scan|glob_files|sniff_csv|parquet_.*|duckdb_.*|pragma_.*|getvariable"
    r"|which_secret|sleep_ms|checkpoint|force_checkpoint|json_execute_serialized_sql"
    r"|json_serialize_sql|json_deserialize_sql|load_extension|readfile|writefile|edit"
    r"|fts3_tokenizer|fts5.*|sqlite_.*|last_insert_rowid|changes|total_changes|version"
    r"|current_user|current_role|session_user|current_schema|current_schemas|current_database"
    r"|current_query|inet_.*|has_.*_privilege|obj_description|col_description|xml.*|xpath.*)$"
)


@pytest.mark.parametrize("engine", ENGINES)
def test_each_list_loads_with_reasons(engine: str) -> None:
    reasons = function_list(engine).reasons
    assert len(reasons) > 100
    # every reason names a category and says something: `math: sine`
    assert all(re.match(r"^[a-z ]+: \S", why) for why in reasons.values())


@pytest.mark.parametrize("engine", ENGINES)
def test_no_list_holds_a_function_that_must_never_be_listed(engine: str) -> None:
    assert sorted(n for n in allowed_functions(engine) if NEVER.match(n)) == []


def test_postgres_age_stays_off() -> None:
    # age(xid) reads the server's transaction counter (other tenants' activity); DuckDB's age
    # only subtracts timestamps.
    assert "age" not in allowed_functions("postgres")
    assert "age" in allowed_functions("duckdb")


@pytest.mark.parametrize("engine", ENGINES)
def test_every_name_sqlglot_parses_specially_is_listed_or_refused(engine: str) -> None:
    """The catalogue walks (tests/integration/test_function_walk.py) cover the names a server
    has; a user schema may add any other. sqlglot turns the names in its own tables into typed
    nodes or special parses: each one off the list must still be refused, however called."""
    parser = Dialect.get_or_raise(engine).parser_class
    special = {
        *parser.FUNCTIONS,
        *parser.FUNCTION_PARSERS,
        *parser.NO_PAREN_FUNCTION_PARSERS,
    }
    allowed = allowed_functions(engine)
    names = sorted(
        n
        for n in (k.lower() for k in special)
        if re.fullmatch(r"[a-z_]\w*", n) and n not in allowed
    )
    assert len(names) > 400
    templates = ("SELECT {n}({a})", "SELECT * FROM {n}({a})", 'SELECT "{n}"({a})')
    passed = [
        sql
        for n in names
        for a in ("", "NULL", "NULL, NULL")
        for t in (templates[2:] if n in RESERVED[engine] else templates)
        if check_safety(sql := t.format(n=n, a=a), engine).ok
    ]
    assert passed == []


def test_glob_is_listed_only_where_it_is_the_operator() -> None:
    # SQLite's glob() is the GLOB operator; DuckDB's glob() lists files.
    assert "glob" in allowed_functions("sqlite")
    assert "glob" not in allowed_functions("duckdb")


def test_grammar_entries_are_marked() -> None:
    postgres = function_list("postgres")
    assert {"cast", "coalesce", "trim", "sw_match"} <= postgres.syntax
    assert "lower" not in postgres.syntax
    assert all(postgres.reasons[n].startswith(SYNTAX_MARK) for n in postgres.syntax)


def test_a_dialect_without_a_list_gets_only_the_shared_names() -> None:
    shared = set.intersection(*(set(allowed_functions(e)) for e in ENGINES))
    assert allowed_functions("mysql") == frozenset(shared)
    assert {"lower", "count", "sum"} <= shared
    assert not check_safety("SELECT sleep(10)", "mysql").ok
    assert check_safety("SELECT lower(name), count(*) FROM t GROUP BY 1", "mysql").ok


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("lower", "expected `name  reason`"),
        ("Lower  string: lower-cases", "not a lower-case function name"),
        ("lower  a\nlower  b", "listed twice"),
        ("pg_catalog.lower  qualified", "not a lower-case function name"),
    ],
)
def test_malformed_lists_fail_loudly(text: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        parse_list(text)


def test_comments_and_blank_lines_are_skipped() -> None:
    assert parse_list("# heading\n\nlower   string: lower-cases\n  # note\n") == {
        "lower": "string: lower-cases"
    }


def test_sqlite_authorizer_reads_the_same_list() -> None:
    assert allowed_functions("sqlite") == sqlite_policy.ALLOWED_FUNCTIONS
    assert isinstance(sqlite_policy.ALLOWED_FUNCTIONS, frozenset)


@pytest.mark.parametrize(
    ("sql", "allowed"),
    [
        ("SELECT lower('A'), CURRENT_TIMESTAMP IS NOT NULL, strftime('%Y', 'now')", True),
        ("SELECT 'a' GLOB 'a*', 'a' LIKE 'a', json_extract('{\"a\": 1}', '$.a')", True),
        ("SELECT sqlite_version()", False),
        ("SELECT randomblob(10)", False),
        ("SELECT last_insert_rowid()", False),
    ],
)
def test_sqlite_authorizer_allows_exactly_the_list(sql: str, allowed: bool) -> None:
    conn = sqlite3.connect(":memory:")
    conn.set_authorizer(sqlite_policy.authorizer)
    try:
        conn.execute(sql).fetchall()
        ran = True
    except sqlite3.DatabaseError as exc:
        assert "not authorized" in str(exc)
        ran = False
    finally:
        conn.close()
    assert ran is allowed


def _gold(bench: Path) -> dict[str, list[str]]:
    spider = json.loads((bench / "spider" / "dev.json").read_text())
    bird = json.loads((bench / "bird" / "dev" / "dev.json").read_text())
    revised = json.loads((bench / "bird" / "dev" / "dev_revised.json").read_text())
    return {
        "spider": [e["query"] for e in spider],
        "bird": [e["SQL"] for e in bird],
        "bird_revised": [e["sql"] for e in revised],
    }


def test_no_gold_query_is_refused_for_its_functions(bench_dir: Path) -> None:
    """Every gold query of Spider dev and BIRD dev (SQLite) passes, as it did under the
    deny-list this list replaced (measured before the change: 1034/1034, 1534/1534 and
    1534/1534 passed): the allow-list refuses nothing real SQL needs."""
    for name, queries in _gold(bench_dir).items():
        results = [check_safety(sql, "sqlite") for sql in queries]
        forbidden = [
            (sql, p.model_dump().get("function"))
            for sql, r in zip(queries, results, strict=True)
            for p in r.problems
            if p.type == "forbidden_function"
        ]
        assert forbidden == [], name
        assert sum(r.ok for r in results) == len(queries), name
