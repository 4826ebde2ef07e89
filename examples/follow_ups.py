"""Follow-up turns read with the question they follow (`api.context(…, follows=…)`), against
the same turns read on their own: a fixture of conversations in, how many packs hold the
tables their SQL needs (or are empty, for a follow-up that has left the database) out.

python examples/follow_ups.py tests/fixtures/context/follow_ups.yaml \\
    ../shared/bench/chinook/chinook.sqlite
python examples/follow_ups.py tests/fixtures/context/follow_ups_spider.yaml \\
    ../shared/bench/spider/database
(a directory: each case's `database` is a Spider database in it)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

from schemawise import api
from schemawise.retrieve.pack import ContextPack


def _right(pack: ContextPack, case: dict[str, Any]) -> bool:
    names = {t.name for t in pack.tables}
    return not names if case.get("empty") else set(case["tables"]) <= names


def _source(data: Path, case: dict[str, Any], indexed: set[str]) -> str:
    path = data if data.is_file() else data / case["database"] / f"{case['database']}.sqlite"
    name = f"follow_ups_{path.stem}"
    if name not in indexed:
        api.index(f"sqlite:///{path}", name)
        indexed.add(name)
    return name


def main(fixture: str, data: str) -> None:
    cases = yaml.safe_load(Path(fixture).read_text())
    indexed = {s["source"] for s in api.sources()}
    tally = {"with": [0, 0], "alone": [0, 0]}  # [on-topic right, off-topic empty]
    for case in cases:
        source = _source(Path(data), case, indexed)
        read = api.context(case["question"], sources=[source], follows=case["follows"])
        alone = api.context(case["question"], sources=[source])
        for key, pack in (("with", read), ("alone", alone)):
            tally[key][bool(case.get("empty"))] += _right(pack, case)
        mark = "ok " if _right(read, case) else "MISS"
        print(f"{mark} {case['follows']} → {case['question']}: {[t.name for t in read.tables]}")
    on = sum(not c.get("empty") for c in cases)
    for key, (right, empty) in tally.items():
        print(f"{key}: {right}/{on} follow-ups hold their tables, "
              f"{empty}/{len(cases) - on} that left the database are empty")  # fmt: skip


if __name__ == "__main__":
    main(*sys.argv[1:3])
