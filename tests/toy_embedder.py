"""A toy embedder for unit tests: texts listed on one axis are alike, any other text is far
from all of them. Real models are out of unit tests (they run in integration tests)."""

from __future__ import annotations

import numpy as np


class AxisEmbedder:
    """`axes`: text → its axis. A listed text is 1 on its axis (plus `shared` on the last
    axis: a little common meaning, as real vectors have); any other text is 1 on the last."""

    name = "toy"

    def __init__(self, axes: dict[str, int], dim: int, shared: float = 0.0) -> None:
        self.axes, self.dim, self.shared = axes, dim, shared
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dim))
        for i, text in enumerate(texts):
            if text in self.axes:
                out[i, self.axes[text]] = 1.0
                out[i, self.dim - 1] += self.shared
            else:
                out[i, self.dim - 1] = 1.0
        return out
