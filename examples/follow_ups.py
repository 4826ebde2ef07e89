"""Follow-up turns read with the questions they follow (`api.context(…, follows=…)`), against
the same turns read on their own as they were before (no floor): a fixture of conversations
in, how many packs hold the tables their SQL needs out. It indexes into the schemawise home
(`follow_ups_<database>` sources).

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
    return set(case["tables"]) <= {t.name for t in pack.tables}


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
    tally = {"with the questions it follows": 0, "on its own": 0}
    for case in cases:
        source = _source(Path(data), case, indexed)
        read = api.context(case["question"], sources=[source], follows=case["follows"])
        alone = api.context(case["question"], sources=[source], relevance_floor=False)
        tally["with the questions it follows"] += _right(read, case)
        tally["on its own"] += _right(alone, case)
        mark = "ok  " if _right(read, case) else "MISS"
        earlier = case["follows"].replace("\n", " / ")
        print(f"{mark} {earlier} → {case['question']}: {[t.name for t in read.tables]}")
    for key, right in tally.items():
        print(f"{key}: {right}/{len(cases)} follow-ups hold the tables their SQL needs")


if __name__ == "__main__":
    main(*sys.argv[1:3])
