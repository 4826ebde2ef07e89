"""Percentiles for benchmark timings."""

from __future__ import annotations

import statistics


def percentiles(samples: list[float]) -> dict[str, float]:
    if not samples:
        return {"p50": 0.0, "p95": 0.0, "n": 0}
    ordered = sorted(samples)
    p95_index = min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))
    return {
        "p50": round(statistics.median(ordered), 4),
        "p95": round(ordered[p95_index], 4),
        "n": len(ordered),
    }
