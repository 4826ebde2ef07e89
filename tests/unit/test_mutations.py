"""Mutation operators of `bench validate`: a mutant must have the defect it stands for, and an
operator that cannot make one says why instead of counting a harmless mutant as missed."""

from __future__ import annotations

import random

import pytest
import sqlglot
from sqlglot import exp

from schemawise.bench.mutations import (
    NO_CONDITION,
    STILL_LINKED,
    Skipped,
    drop_join_predicate,
    misspell_table,
    wrong_join_key,
)
from schemawise.graph.model import SchemaGraph
from schemawise.validate.check import check_sql
from tests.unit.test_check import GRAPH, table

SEEDS = range(12)


def parse(sql: str) -> exp.Expression:
    tree = sqlglot.parse_one(sql, read="sqlite")
    assert isinstance(tree, exp.Expression)
    return tree


def error_types(sql: str) -> set[str]:
    return {p.type for p in check_sql(sql, GRAPH).errors}


@pytest.mark.parametrize(
    "sql",
    [
        # sqlglot reads the first JOIN as `ON TRUE`: dropping that would change nothing.
        "SELECT o.amt FROM orders o JOIN customers c JOIN regions r "
        "ON c.customer_id = o.customer_id AND r.region_id = c.region_id",
        # A filter on the joined table does not join it.
        "SELECT o.amt FROM orders o JOIN customers c ON c.customer_id = o.customer_id "
        "WHERE c.status = 'active'",
        # The subquery's o and c are its own: they do not join the outer ones.
        "SELECT o.amt FROM orders o JOIN customers c ON c.customer_id = o.customer_id "
        "WHERE o.amt > (SELECT avg(o.amt) FROM orders o JOIN customers c "
        "ON c.customer_id = o.customer_id)",
    ],
)
def test_dropped_predicate_leaves_a_cartesian_product(sql: str) -> None:
    assert error_types(sql) == set()
    for seed in SEEDS:
        mutant = drop_join_predicate(parse(sql), GRAPH, random.Random(seed))
        assert isinstance(mutant, str)
        assert "cartesian_join" in error_types(mutant), mutant


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("SELECT o.amt FROM orders o JOIN customers c WHERE c.customer_id = o.customer_id",
         NO_CONDITION),
        ("SELECT o.amt FROM orders o JOIN customers c ON c.customer_id = o.customer_id "
         "WHERE o.customer_id = c.customer_id", STILL_LINKED),
    ],
)  # fmt: skip
def test_drop_that_changes_nothing_is_skipped(sql: str, reason: str) -> None:
    assert error_types(sql) == set()
    assert drop_join_predicate(parse(sql), GRAPH, random.Random(0)) == Skipped(reason)


def test_no_join_means_not_applicable() -> None:
    assert drop_join_predicate(parse("SELECT amt FROM orders"), GRAPH, random.Random(0)) is None


def test_wrong_key_stays_in_the_pairs_own_select() -> None:
    # The subquery swaps the aliases: its t2 is orders, the outer t2 customers.
    sql = (
        "SELECT t1.amt FROM orders t1 JOIN customers t2 ON t1.customer_id = t2.customer_id "
        "WHERE t1.amt > (SELECT avg(t2.amt) FROM customers t1 JOIN orders t2 "
        "ON t2.customer_id = t1.customer_id)"
    )
    assert error_types(sql) == set()
    for seed in SEEDS:
        mutant = wrong_join_key(parse(sql), GRAPH, random.Random(seed))
        assert isinstance(mutant, str)
        assert error_types(mutant) == {"wrong_join_key"}, mutant


def test_misspelt_table_is_never_a_keyword() -> None:
    # Spider's network_1 has a table Likes: one deletion makes it the keyword LIKE.
    graph = SchemaGraph(dialect="sqlite", tables=[table("Likes", ["id"], "id", "liked_id")])
    for seed in SEEDS:
        mutant = misspell_table(parse("SELECT id FROM Likes"), graph, random.Random(seed))
        assert isinstance(mutant, str)
        assert [p.type for p in check_sql(mutant, graph).errors] == ["unknown_table"], mutant
