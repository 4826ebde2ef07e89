"""Extract the schema graph of a SQLite file and print the join path between two tables.

python examples/join_path.py ../shared/bench/chinook/chinook.sqlite Artist Genre
"""

from __future__ import annotations

import sys

import schemawise


def main(path: str, *tables: str) -> None:
    with schemawise.connect(f"sqlite:///{path}") as source:
        graph = schemawise.extract_graph(source)
    print(f"{len(graph.tables)} tables, {len(graph.edges)} edges, version {graph.version}")
    print(schemawise.connecting_tree(graph, list(tables)).render())


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit("usage: join_path.py FILE.sqlite TABLE TABLE [TABLE…]")
    main(sys.argv[1], *sys.argv[2:])
