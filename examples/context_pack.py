"""Index a SQLite file into the embedded Postgres and print the context pack for a question.

python examples/context_pack.py ../shared/bench/chinook/chinook.sqlite "revenue per genre"
"""

from __future__ import annotations

import sys

import psycopg

from schemawise.db.embedded import ensure_started
from schemawise.index.embed import get_embedder
from schemawise.index.sources import index_source, load_graphs, load_metadata
from schemawise.retrieve.context import build_context
from schemawise.retrieve.settings import ContextSettings


def main(path: str, question: str) -> None:
    index_url = ensure_started()
    report = index_source(index_url, f"sqlite:///{path}", "example")
    print(f"indexed {report.tables} tables as {report.documents} documents")
    with psycopg.connect(index_url) as conn:
        pack = build_context(
            conn,
            question,
            load_graphs(conn, ["example"]),
            get_embedder(),
            sources=["example"],
            metadata=load_metadata(conn, ["example"]),
            settings=ContextSettings(budget=2000),  # also max_tables, ranker=…
        )
    for table in pack.tables:
        print(f"{table.name}: {'; '.join(table.reasons)}")
    print(pack.text)
    print(f"({pack.tokens} tokens)")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit('usage: context_pack.py FILE.sqlite "QUESTION"')
    main(sys.argv[1], sys.argv[2])
