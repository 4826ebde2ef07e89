"""The context engine's layering, read from the imports: its stages are pure (only the index
reader and the wiring touch the database), and the modules below it — pruning, the rerank,
the index — take only grammar and settings from retrieve/, never the pipeline."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "schemawise"

# Imported by modules below the pipeline: grammar, values and the tuned constants only.
LEAVES = {"words", "implied", "values", "settings"}
# The only modules of retrieve/ allowed I/O: the reader, and the wiring that hands it a connection.
IO_MODULES = {"reading", "context"}
IO_IMPORTS = ("psycopg", "schemawise.index.store", "schemawise.db", "schemawise.index.embed")


def _runtime_imports(path: Path) -> set[str]:
    """Modules a file imports when it runs (not those under `if TYPE_CHECKING:`)."""
    tree = ast.parse(path.read_text())
    typing_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
        for statement in block.body
        for node in ast.walk(statement)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def _modules(package: str) -> list[Path]:
    return sorted((SRC / package).glob("*.py"))


@pytest.mark.parametrize(
    "path", [*_modules("prune"), *_modules("rank"), *_modules("index")], ids=lambda p: p.stem
)
def test_modules_below_the_pipeline_take_only_its_leaves(path: Path) -> None:
    used = {
        name.split(".")[2]
        for name in _runtime_imports(path)
        if name.startswith("schemawise.retrieve.") and len(name.split(".")) > 2
    }
    assert used <= LEAVES, f"{path.name} imports retrieve.{used - LEAVES}"


@pytest.mark.parametrize(
    "path",
    [p for p in _modules("retrieve") if p.stem not in IO_MODULES | {"__init__"}],
    ids=lambda p: p.stem,
)
def test_the_stages_do_no_io(path: Path) -> None:
    touching = {n for n in _runtime_imports(path) if n.startswith(IO_IMPORTS)}
    assert not touching, f"{path.name} imports {touching}"
