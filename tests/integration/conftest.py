from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from schemawise import api
from schemawise.db.embedded import database_url
from schemawise.db.postgres import PostgresSource
from schemawise.demo import querylog, warehouse
from schemawise.graph.extract import ExtractOptions, extract_graph
from schemawise.graph.infer import read_query_log
from schemawise.graph.model import SchemaGraph


@pytest.fixture(scope="session")
def demo_rows(embedded_url: str) -> warehouse.DemoRows:
    return warehouse.build(embedded_url)


@pytest.fixture(scope="session")
def demo_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return querylog.write(tmp_path_factory.mktemp("demo") / "query_log.jsonl")


@pytest.fixture(scope="session")
def demo_graph(embedded_url: str, demo_rows: warehouse.DemoRows, demo_log: Path) -> SchemaGraph:
    with PostgresSource(embedded_url, schemas=["shop"]) as source:
        return extract_graph(source, ExtractOptions(query_log=read_query_log(demo_log)))


# The assistant's tests: a small demo warehouse in its own database, indexed as one source.
DATABASE = "assistant_demo"
SOURCE = "shopdemo"


@pytest.fixture(scope="session")
def demo_source(embedded_url: str) -> str:
    with psycopg.connect(database_url(embedded_url, "postgres"), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{DATABASE}"')
    warehouse.build(database_url(embedded_url, DATABASE),
                    warehouse.DemoSizes(customers=400, products=50, orders=2000, reps=8,
                                        notes=50))  # fmt: skip
    api.index(f"embedded/{DATABASE}", SOURCE, index_url=embedded_url, profile=False)
    return SOURCE
