"""The static safety policy refuses every hostile statement, with a reason, and passes reads."""

from __future__ import annotations

import pytest

from schemawise.validate.safety import MAX_SQL_BYTES, check_safety

HOSTILE_POSTGRES = [
    # a second statement, however it is hidden
    "SELECT 1; DELETE FROM shop.orders",
    "SELECT 1 ; DROP TABLE shop.orders --",
    "SELECT 1/* comment */; UPDATE shop.orders SET amt = 0",
    "SELECT 'a'';DELETE FROM shop.orders;--'; DELETE FROM shop.orders",
    "SELECT E'\\'' ; DELETE FROM shop.orders",
    "SELECT 1; COMMIT; DELETE FROM shop.orders",
    # writes dressed as reads
    "WITH gone AS (DELETE FROM shop.orders RETURNING *) SELECT count(*) FROM gone",
    "WITH x AS (UPDATE shop.orders SET amt = 0 RETURNING 1) SELECT * FROM x",
    "WITH x AS (INSERT INTO shop.regions VALUES (99, 'x', 'y') RETURNING 1) SELECT * FROM x",
    "SELECT * INTO shop.copy_of_orders FROM shop.orders",
    "SELECT * FROM shop.orders FOR UPDATE",
    "SELECT * FROM shop.orders FOR SHARE",
    "INSERT INTO shop.regions VALUES (99, 'x', 'y')",
    "UPDATE shop.orders SET amt = 0",
    "DELETE FROM shop.orders",
    "TRUNCATE shop.orders",
    "DROP TABLE shop.orders",
    "CREATE TABLE x (a int)",
    "ALTER TABLE shop.orders ADD COLUMN x int",
    "GRANT ALL ON shop.orders TO public",
    "COPY shop.orders TO PROGRAM 'touch /tmp/pwned'",
    "COPY (SELECT 1) TO '/tmp/out'",
    "SET ROLE postgres",
    "RESET ALL",
    "BEGIN",
    "CALL some_procedure()",
    "DO $$ BEGIN PERFORM 1; END $$",
    "LISTEN channel",
    "NOTIFY channel, 'x'",
    "PREPARE p AS SELECT 1",
    "EXPLAIN ANALYZE DELETE FROM shop.orders",
    "VACUUM shop.orders",
    # functions with side effects or reach outside, in every position
    "SELECT pg_read_file('/etc/passwd')",
    "SELECT pg_catalog.pg_read_binary_file('/etc/passwd')",
    "SELECT * FROM pg_ls_dir('/')",
    'SELECT "PG_SLEEP"(10)',
    "SELECT 1 WHERE pg_sleep(10) IS NOT NULL",
    "SELECT 1 ORDER BY pg_sleep(10)",
    "SELECT (SELECT lo_import('/etc/passwd'))",
    "WITH x AS (SELECT set_config('role', 'postgres', false)) SELECT * FROM x",
    "SELECT * FROM shop.orders o, LATERAL (SELECT pg_terminate_backend(1)) t",
    "SELECT nextval('seq')",
    "SELECT setval('seq', 1)",
    "SELECT txid_current()",
    "SELECT pg_advisory_lock(1)",
    "SELECT query_to_xml('delete from shop.orders', true, true, '')",
    "SELECT dblink_exec('host=x', 'delete from t')",
    "SELECT pg_notify('c', 'x')",
    "SELECT max(x) FROM (SELECT pg_cancel_backend(1) AS x) s",
    "SELECT coalesce(NULL, current_setting('data_directory'))",
    "SELECT sum(amt) FILTER (WHERE pg_reload_conf()) FROM shop.orders",
    # encodings and tricks
    "SELECT U&'\\0064elete'",
    'SELECT * FROM U&"\\0070g_shadow"',
    "SELECT 1\x00; DELETE FROM shop.orders",
    "SELECT 1 \u200b; DELETE FROM shop.orders",
    "SELECT ((((((((((((((((((((" * 60 + "1" + ")" * 1200,
    "SELECT '" + "x" * (MAX_SQL_BYTES + 1) + "'",
]

HOSTILE_SQLITE = [
    "SELECT load_extension('/tmp/evil.so')",
    "SELECT readfile('/etc/passwd')",
    "SELECT writefile('/tmp/x', 'y')",
    "ATTACH DATABASE '/tmp/new.db' AS x",
    "PRAGMA writable_schema = 1",
    "SELECT fts3_tokenizer('simple')",
    "SELECT 1; DELETE FROM orders",
    "VACUUM INTO '/tmp/copy.db'",
]

HOSTILE_DUCKDB = [
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_parquet('s3://bucket/x.parquet')",
    "SELECT * FROM glob('/etc/*')",
    "SELECT * FROM sqlite_scan('/tmp/x.db', 't')",
    "INSTALL httpfs",
    "ATTACH '/tmp/x.duckdb' AS y",
    "SET enable_external_access = true",
    "COPY (SELECT 1) TO '/tmp/out.csv'",
]


@pytest.mark.parametrize("sql", HOSTILE_POSTGRES)
def test_hostile_postgres_is_refused(sql: str) -> None:
    result = check_safety(sql, "postgres")
    assert not result.ok
    assert result.problems[0].type in {"unsafe_statement", "forbidden_function", "parse_error"}
    assert result.problems[0].message and result.problems[0].hint


@pytest.mark.parametrize("sql", HOSTILE_SQLITE)
def test_hostile_sqlite_is_refused(sql: str) -> None:
    assert not check_safety(sql, "sqlite").ok


@pytest.mark.parametrize("sql", HOSTILE_DUCKDB)
def test_hostile_duckdb_is_refused(sql: str) -> None:
    assert not check_safety(sql, "duckdb").ok


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1",
        "select count(*) from shop.orders where status in ('A', 'S')",
        "WITH x AS (SELECT order_id FROM shop.orders) SELECT * FROM x",
        "SELECT 1 UNION ALL SELECT 2",
        "VALUES (1, 'a'), (2, 'b')",
        "SELECT 'delete from t; drop table x' AS harmless_text",
        "SELECT 1 -- ; DELETE FROM shop.orders",
        "SELECT 1 /* ; DELETE FROM shop.orders */",
        "SELECT lower(name), coalesce(email, '') FROM shop.customers",
        "SELECT date_trunc('month', ordered_at), sum(amt) FROM shop.orders GROUP BY 1",
        "SELECT * FROM shop.orders o WHERE EXISTS (SELECT 1 FROM shop.refunds r "
        "WHERE r.order_id = o.order_id)",
    ],
)
def test_reads_pass(sql: str) -> None:
    result = check_safety(sql, "postgres")
    assert result.ok, result.problems
    assert result.tree is not None


def test_refusal_names_the_function() -> None:
    [problem] = check_safety("SELECT pg_sleep(1), 1", "postgres").problems
    assert problem.type == "forbidden_function"
    assert problem.model_dump()["function"] == "pg_sleep"


def test_strict_mode_allows_only_known_functions() -> None:
    assert check_safety("SELECT my_udf(1)", "postgres").ok
    assert not check_safety("SELECT my_udf(1)", "postgres", strict=True).ok
    assert check_safety("SELECT upper('a'), count(*)", "postgres", strict=True).ok


def test_second_statement_count_is_reported() -> None:
    [problem] = check_safety("SELECT 1; SELECT 2", "postgres").problems
    assert problem.model_dump()["statements"] == 2
