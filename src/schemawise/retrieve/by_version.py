"""What a question derives from a schema and the next question needs again (its lexicon, its
table cards read by the word reader), kept by schema version.

`api.context` and the assistant load the graphs afresh for each question, so a cache on the
graph object alone would embed every word or card of the schema again each time. A version
names one schema's tables and columns exactly (SchemaGraph.compute_version); a graph without
one is derived anew (and then once per graph object, by `SchemaGraph.cached`).
"""

from __future__ import annotations

from collections.abc import Callable

from schemawise.graph.model import SchemaGraph


class ByVersion[T]:
    """Values by (schema version, what they are of: an embedder's name…), the oldest let go
    past `kept` (a process serving many databases does not grow without bound)."""

    def __init__(self, kept: int = 64) -> None:
        self.kept = kept
        self._values: dict[tuple[str, str], T] = {}

    def of(self, graph: SchemaGraph, key: str, build: Callable[[SchemaGraph], T]) -> T:
        """The value for `graph` under `key`, built once per schema version."""

        def derive(g: SchemaGraph) -> T:
            if not g.version:
                return build(g)
            slot = (g.version, key)
            if slot not in self._values:
                if len(self._values) >= self.kept:
                    self._values.pop(next(iter(self._values)))
                self._values[slot] = build(g)
            return self._values[slot]

        return graph.cached(key, derive)
