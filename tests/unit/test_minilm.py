"""all-MiniLM-L6-v2 in numpy gives the model's own outputs."""

from __future__ import annotations

import numpy as np
import pytest

from schemawise.index.embed import get_embedder
from schemawise.index.minilm import _erf, gelu


def test_matches_the_reference_pair() -> None:
    embedder = get_embedder("all-minilm-l6-v2")
    vectors = embedder.embed(
        ["A man is eating food.", "A man is eating a piece of bread.", "A man is riding a horse.",
         "The girl is carrying a baby."]
    )  # fmt: skip
    assert vectors.shape == (4, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similarity = vectors @ vectors.T
    # The model card's reference: cosine 0.755 for these two sentences.
    assert similarity[0, 1] == pytest.approx(0.755, abs=0.002)
    assert similarity[0, 1] > similarity[0, 2] > similarity[0, 3]


def test_batching_and_padding_do_not_change_a_vector() -> None:
    embedder = get_embedder("all-minilm-l6-v2")
    alone = embedder.embed(["orders shipped per region"])
    mixed = embedder.embed(["x", "orders shipped per region", "a much longer text " * 20])
    assert np.allclose(alone[0], mixed[1], atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)


@pytest.mark.parametrize("x", [-3.0, -0.5, 0.0, 0.7, 2.5])
def test_erf_and_gelu(x: float) -> None:
    import math

    assert float(_erf(np.array([x]))[0]) == pytest.approx(math.erf(x), abs=2e-7)
    assert float(gelu(np.array([x]))[0]) == pytest.approx(
        0.5 * x * (1 + math.erf(x / math.sqrt(2))), abs=1e-6
    )
