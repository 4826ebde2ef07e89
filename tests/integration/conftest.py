from __future__ import annotations

from pathlib import Path

import pytest

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
