"""Hostile statements of the second attack round, by class and engine (issue: guarded execution,
hardened). Each must be refused, or contained within its deadline, without leaking another
tenant's rows, a setting or a file, and without changing anything.

Placeholders: `{T}` the searchable tenant table (Postgres), `{SECRET_FILE}` a file whose content
must never come back, `{DB}` the database file (SQLite, DuckDB).
"""

from __future__ import annotations

from dataclasses import dataclass

# The classes of the first attack's findings.
SQL_TEXT = "runs SQL text"
TIMEOUT_OFF = "switches the timeout off"
OTHER_RUNS = "ends or blocks other runs"
WRITES = "writes from a read-only run"
BY_NAME = "reads tables, files or settings by name"
PLANNING = "works while planning"
ONE_CALL = "works inside one function call"
SW_MATCH = "abuses sw_match"
RESOURCES = "memory, bytes and catalogue leaks"

CLASSES = (SQL_TEXT, TIMEOUT_OFF, OTHER_RUNS, WRITES, BY_NAME, PLANNING, ONE_CALL, SW_MATCH,
           RESOURCES)  # fmt: skip


@dataclass(frozen=True)
class Case:
    engine: str
    kind: str
    sql: str


def _pg(kind: str, *statements: str) -> list[Case]:
    return [Case("postgres", kind, s) for s in statements]


def _sqlite(kind: str, *statements: str) -> list[Case]:
    return [Case("sqlite", kind, s) for s in statements]


def _duckdb(kind: str, *statements: str) -> list[Case]:
    return [Case("duckdb", kind, s) for s in statements]


POSTGRES = [
    *_pg(SQL_TEXT,
         "SELECT * FROM ts_stat('SELECT to_tsvector(body) FROM schemawise.tenant_roles')",
         "SELECT word FROM ts_stat($$SELECT to_tsvector(string_agg(body, ' ')) FROM {T}$$)",
         "SELECT ts_rewrite('a'::tsquery, 'SELECT set_config(''statement_timeout'', ''0'', "
         "false)::tsquery, ''b''::tsquery')",
         "SELECT pg_catalog.ts_stat('SELECT 1')",
         'SELECT "ts_stat"(\'SELECT 1\')',
         "SELECT query_to_xml('SELECT * FROM {T}', true, false, '')",
         "SELECT table_to_xml('{T}', true, false, '')",
         "SELECT * FROM {T} t WHERE EXISTS (SELECT 1 FROM ts_stat('SELECT ''x''::tsvector'))"),
    *_pg(TIMEOUT_OFF,
         "SELECT set_config('statement_timeout', '0', false), pg_sleep(5)",
         "WITH s AS (SELECT set_config('statement_timeout', '0', true)) SELECT count(*) FROM "
         "generate_series(1, 100000000), s",
         "SELECT count(*) FROM generate_series(1, 2000000000)",
         "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
         "SELECT count(*) FROM r",
         "SELECT count(*) FROM {T} a, {T} b, {T} c, {T} d, {T} e"),
    *_pg(OTHER_RUNS,
         "SELECT pg_terminate_backend(pid) FROM pg_stat_activity",
         "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()",
         "SELECT pg_advisory_lock(42)",
         "SELECT pg_try_advisory_xact_lock(42)",
         "SELECT * FROM {T} FOR UPDATE SKIP LOCKED"),
    *_pg(WRITES,
         "SELECT pg_logical_emit_message(false, 'x', repeat('x', 10000000))",
         "SELECT pg_current_xact_id()",
         "SELECT txid_current()",
         "SELECT lo_from_bytea(0, 'x')",
         "SELECT nextval('schemawise.rows_outbox_id_seq')"),
    *_pg(BY_NAME,
         "SELECT * FROM schemawise.tenant_roles",
         "SELECT * FROM schemawise.rows_config",
         "SELECT current_setting('data_directory')",
         "SELECT current_setting('sw_test.secret')",
         "SELECT pg_read_file('{SECRET_FILE}')",
         "SELECT * FROM pg_settings"),
    *_pg(PLANNING,
         "SELECT * FROM {T} n0 " + " ".join(f"NATURAL JOIN {{T}} n{i}" for i in range(1, 400)),
         "WITH a0 AS (SELECT * FROM {T}), "
         + ", ".join(f"a{i} AS (SELECT * FROM a{i - 1})" for i in range(1, 1500))
         + " SELECT * FROM a1499",
         "SELECT id FROM {T} WHERE " + " OR ".join(f"id = {i}" for i in range(3000)),
         "SELECT 1 WHERE repeat('a', 200000000) = repeat('b', 200000000)",
         "SELECT count(*) FROM {T} WHERE body = repeat(repeat('x', 30000), 30000)"),
    *_pg(ONE_CALL,
         "SELECT 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!' ~ '^(a+)+$'",
         "SELECT length(string_agg(repeat('x', 1000000), '')) FROM generate_series(1, 2000)",
         "SELECT md5(repeat('x', 500000000))"),
    *_pg(SW_MATCH,
         "SELECT n.id FROM {T} n WHERE sw_match('{T}', 'x', 1.5)",
         "SELECT n.id FROM {T} n WHERE sw_match('{T}', 'x', 99999999999999999999)",
         "SELECT id FROM {T} WHERE " + " OR ".join(["sw_match('{T}', 'note')"] * 200),
         "SELECT id FROM {T} WHERE sw_match('{T}', 'x'' OR 1=1 --')",
         "SELECT id FROM {T} WHERE sw_match('{T}', (SELECT body FROM {T} LIMIT 1))",
         "SELECT id FROM {T} WHERE sw_match('schemawise.tenant_roles', 'x')",
         "SELECT id FROM {T} WHERE sw_match('{T}', 'note', 100000000)"),
    *_pg(RESOURCES,
         "SELECT repeat('x', 200000000)",
         "SELECT * FROM pg_show_all_settings()",
         "SELECT * FROM pg_stat_get_activity(NULL)",
         "SELECT * FROM pg_lock_status()",
         "SELECT pg_stat_get_live_tuples('{T}'::regclass)",
         "SELECT reltuples FROM pg_class WHERE relname = 'notes'",
         "SELECT CASE WHEN g <= 255 THEN 'x' ELSE repeat('y', 2000000) END AS v "
         "FROM generate_series(1, 1000) g",
         "SELECT json_agg('{\"a\":{}}'::json) FROM generate_series(1, 8000000) g",
         "SELECT (repeat('[', 3000) || repeat(']', 3000))::jsonb AS j",
         "SELECT ('[' || repeat('9', 5000) || ']')::json AS j",
         "SELECT array_fill(0, ARRAY[10000000, 1]) AS a"),
]  # fmt: skip

SQLITE = [
    *_sqlite(SQL_TEXT,
             "SELECT * FROM sqlite_master WHERE sql LIKE '%' AND load_extension('x')",
             "SELECT eval('DELETE FROM Album')"),
    *_sqlite(TIMEOUT_OFF,
             "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
             "SELECT count(*) FROM r",
             "SELECT count(*) FROM Track a, Track b, Track c",
             "SELECT sqlite_sleep(10000)"),
    *_sqlite(WRITES,
             "SELECT writefile('{DB}.copy', 'x')",
             "VACUUM INTO '{DB}.copy'",
             "ATTACH DATABASE '{DB}.attached' AS a",
             "PRAGMA journal_mode = DELETE"),
    *_sqlite(BY_NAME,
             "SELECT readfile('{SECRET_FILE}')",
             "SELECT * FROM fsdir('/tmp')",
             "SELECT * FROM pragma_compile_options"),
    *_sqlite(PLANNING,
             "SELECT * FROM Genre g0 "
             + " ".join(f"NATURAL JOIN Genre g{i}" for i in range(1, 400))),
    *_sqlite(ONE_CALL,
             "SELECT instr(printf('%.*c', 3000000, 'a'), 'b')",
             "SELECT length(replace(printf('%.*c', 2000000, 'a'), 'a', printf('%.*c', 500, 'b')))",
             "SELECT length(zeroblob(1000000000))",
             "SELECT length(randomblob(900000000))",
             "SELECT length(printf('%.*c', 900000000, 'x'))"),
    *_sqlite(RESOURCES,
             "SELECT printf('%.*c', 50000000, 'x')",
             "SELECT group_concat(printf('%.*c', 100000, 'x')) FROM Track",
             "SELECT a.Name, b.Name FROM Track a, Track b LIMIT 5000000"),
]  # fmt: skip

DUCKDB = [
    *_duckdb(SQL_TEXT,
             "SELECT * FROM query('SELECT 42')",
             "SELECT * FROM query_table('t')",
             "SELECT * FROM query('SELECT * FROM duckdb_settings()')"),
    *_duckdb(TIMEOUT_OFF,
             "SELECT count(*) FROM range(10000000000)",
             "SET threads = 64",
             "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
             "SELECT count(*) FROM r"),
    *_duckdb(WRITES,
             "COPY t TO '{DB}.csv'",
             "EXPORT DATABASE '{DB}.export'",
             "CREATE TABLE x AS SELECT 1",
             "SELECT nextval('s')"),
    *_duckdb(BY_NAME,
             "SELECT * FROM read_blob('{DB}')",
             "SELECT * FROM read_text('{SECRET_FILE}')",
             "SELECT * FROM duckdb_settings()",
             "SELECT * FROM duckdb_databases()",
             "SELECT current_setting('temp_directory')",
             "SELECT getenv('HOME')"),
    *_duckdb(PLANNING,
             "SELECT * FROM t t0 " + " ".join(f"NATURAL JOIN t t{i}" for i in range(1, 400)),
             "EXPLAIN SELECT levenshtein(repeat('a', 150000), repeat('b', 150000))",
             "SELECT levenshtein(repeat('a', 150000), repeat('b', 150000))",
             "SELECT 1 WHERE levenshtein(repeat('a', 150000), repeat('b', 150000)) > 0"),
    *_duckdb(ONE_CALL,
             "SELECT length(repeat('x', 1000000000))",
             "SELECT list_sum(range(1000000000))",
             "SELECT jaro_winkler_similarity(repeat('a', 500000), repeat('b', 500000))"),
    *_duckdb(RESOURCES,
             "SELECT repeat('x', 50000000)",
             "SELECT string_agg(repeat('x', 100000), '') FROM range(100000)",
             "SELECT * FROM range(100000000)",
             "SELECT list({}) AS l FROM range(2400000)",
             "SELECT INTERVAL 2147483647 MONTHS AS i"),
]  # fmt: skip

ALL = POSTGRES + SQLITE + DUCKDB
