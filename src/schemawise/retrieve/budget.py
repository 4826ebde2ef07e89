"""A token budget for the pack: the most valuable parts are kept first."""

from __future__ import annotations

from schemawise.graph.model import SchemaGraph
from schemawise.retrieve.pack import ContextPack
from schemawise.retrieve.render import count_tokens, render


def fit_budget(pack: ContextPack, graph: SchemaGraph, budget: int) -> ContextPack:
    """Keep the most valuable parts first: drop tier-2 columns, then the lowest-scoring
    tables' relevant columns, never the first table or its join keys."""
    fitted = pack.model_copy(deep=True)
    while fitted.tokens > budget:
        tier2 = [c for c in fitted.columns if c.tier == 2]
        if tier2:
            fitted.columns.remove(tier2[-1])
        else:
            first = fitted.tables[0].name if fitted.tables else ""
            rest = [c for c in fitted.columns if c.table != first]
            if not rest:
                break
            fitted.columns.remove(rest[-1])
        fitted.text = render(fitted, graph)
        fitted.tokens = count_tokens(fitted.text)
    return fitted
