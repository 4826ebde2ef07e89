"""Embedding providers: a local default shipped inside a PyPI package (no download at run
time), and any OpenAI-compatible endpoint. Every answer is validated before use (I7)."""

from __future__ import annotations

import logging
import math
import os
import shutil
import threading
import warnings
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from schemawise.config import home_dir
from schemawise.errors import SchemawiseError

DEFAULT_MODEL = "wordllama-l2-256"
log = logging.getLogger(__name__)


class EmbeddingError(SchemawiseError):
    """The provider failed or answered something unusable."""

    def __init__(
        self,
        message: str,
        hint: str = "",
        *,
        retryable: bool = True,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, hint)
        self.retryable = retryable
        self.retry_after = retry_after


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray: ...


def validate_vectors(vectors: Any, count: int, dim: int) -> np.ndarray:
    """One finite vector of the expected dimension per input, or EmbeddingError."""
    array = np.asarray(vectors, dtype=np.float64)
    if array.ndim != 2 or array.shape[0] != count:
        returned = array.shape[0] if array.ndim else 0
        raise EmbeddingError(
            f"The provider returned {returned} vectors for {count} texts.", retryable=True
        )
    if array.shape[1] != dim:
        raise EmbeddingError(
            f"The provider returned vectors of dimension {array.shape[1]}, expected {dim}.",
            "Check the model name: vectors of another model cannot be mixed with these.",
            retryable=True,
        )
    if not np.isfinite(array).all():
        raise EmbeddingError("The provider returned NaN or infinite values.", retryable=True)
    return array.astype(np.float32)


@dataclass
class WordLlamaEmbedder:
    """Static 256-dim embeddings from the `wordllama` wheel, on the CPU, in microseconds."""

    name: str = DEFAULT_MODEL
    dim: int = 256

    def __post_init__(self) -> None:
        self._model = _load_wordllama()

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        raw = self._model.embed([t or " " for t in texts])
        vectors = validate_vectors(raw, len(texts), self.dim)
        return normalise(vectors)


def _load_wordllama() -> Any:
    import logging

    root = logging.getLogger()  # before `resources.files`, which imports the package
    handlers, level = list(root.handlers), root.level
    # The package's loader looks in the wrong sub-folder and would then try to download: lay
    # its shipped files out as it expects, in schemawise's own folder, and forbid downloads.
    package = resources.files("wordllama")
    target = home_dir() / "models" / "wordllama"
    for folder, name in (
        ("tokenizers", "l2_supercat_tokenizer_config.json"),
        ("weights", "l2_supercat_256.safetensors"),
    ):
        destination = target / folder / name
        if not destination.exists():
            destination.parent.mkdir(parents=True, exist_ok=True)
            with resources.as_file(package.joinpath(folder, name)) as source:
                shutil.copyfile(source, destination)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from wordllama import WordLlama

        model = WordLlama.load(cache_dir=Path(target), disable_download=True)
    # wordllama calls logging.basicConfig(level=INFO) on import, which would print every HTTP
    # request of the model client (`ask`) on the terminal: put the root logger back.
    for handler in [h for h in root.handlers if h not in handlers]:
        root.removeHandler(handler)
    root.setLevel(level)
    return model


@dataclass
class OpenAIEmbedder:
    """Any endpoint speaking OpenAI's `POST /embeddings`."""

    name: str
    dim: int
    base_url: str = "https://api.openai.com/v1"
    api_key: str | None = None
    timeout: float = 30.0

    def embed(self, texts: list[str]) -> np.ndarray:
        import httpx

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            response = httpx.post(
                f"{self.base_url.rstrip('/')}/embeddings",
                json={"model": self.name, "input": texts},
                headers=headers,
                timeout=self.timeout,
            )
        except httpx.TimeoutException as exc:
            raise EmbeddingError(f"The embeddings endpoint timed out: {exc}") from exc
        except httpx.HTTPError as exc:
            raise EmbeddingError(f"The embeddings endpoint failed: {exc}") from exc
        if response.status_code == 429 or response.status_code >= 500:
            raise EmbeddingError(
                f"The embeddings endpoint answered {response.status_code}.",
                retry_after=_retry_after(response.headers.get("retry-after")),
            )
        if response.status_code >= 400:
            raise EmbeddingError(
                f"The embeddings endpoint refused the request ({response.status_code}): "
                f"{response.text[:200]}",
                "Check the model name and the API key.",
                retryable=False,
            )
        try:
            data = sorted(response.json()["data"], key=lambda d: d["index"])
            vectors = [d["embedding"] for d in data]
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbeddingError(f"The embeddings endpoint answered malformed JSON: {exc}") from exc
        array = validate_vectors(vectors, len(texts), self.dim)
        return normalise(array)


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


_CACHE: dict[str, Embedder] = {}


def model_spec(model: str | None = None) -> str:
    """The model a caller means: the argument, else SCHEMAWISE_EMBED_MODEL, else the default.
    This spec (not the provider's own model name) is what is stored with the vectors."""
    return model or os.environ.get("SCHEMAWISE_EMBED_MODEL") or DEFAULT_MODEL


def get_embedder(model: str | None = None) -> Embedder:
    """`wordllama-l2-256` (default), `all-minilm-l6-v2` (local, numpy),
    `all-minilm-l6-v2-int8` (local, onnxruntime: the `onnx` extra), or
    `openai:<model>:<dim>` with SCHEMAWISE_OPENAI_BASE_URL and SCHEMAWISE_OPENAI_API_KEY (or
    OPENAI_API_KEY)."""
    model = model_spec(model)
    if model in _CACHE:
        return _CACHE[model]
    embedder: Embedder
    if model == DEFAULT_MODEL:
        embedder = WordLlamaEmbedder()
    elif model == "all-minilm-l6-v2":
        from schemawise.index.minilm import MiniLMEmbedder

        embedder = MiniLMEmbedder()
    elif model == "all-minilm-l6-v2-int8":
        from schemawise.index.onnx_minilm import OnnxMiniLMEmbedder

        embedder = OnnxMiniLMEmbedder()
    elif model.startswith("openai:"):
        parts = model.split(":")
        if len(parts) != 3 or not parts[2].isdigit():
            raise EmbeddingError(
                f"Bad model {model!r}.",
                "Write openai:<model>:<dimension>, e.g. openai:text-embedding-3-small:1536",
                retryable=False,
            )
        embedder = OpenAIEmbedder(
            name=parts[1],
            dim=int(parts[2]),
            base_url=os.environ.get("SCHEMAWISE_OPENAI_BASE_URL", "https://api.openai.com/v1"),
            api_key=os.environ.get("SCHEMAWISE_OPENAI_API_KEY") or os.environ.get("OPENAI_API_KEY"),
        )
    else:
        raise EmbeddingError(
            f"Unknown embedding model {model!r}.",
            f"Use {DEFAULT_MODEL} (local), all-minilm-l6-v2 (local), all-minilm-l6-v2-int8 "
            "(local, onnxruntime) or openai:<model>:<dimension>.",
            retryable=False,
        )
    _CACHE[model] = embedder
    return embedder


# The models that read single words for the relevance floor (relevance.RelevanceFloor.readers),
# the faster first: all-MiniLM-L6-v2 with int8 weights (the `onnx` extra), else in numpy.
WORD_READERS = ("all-minilm-l6-v2-int8", "all-minilm-l6-v2")
_READER: list[Embedder | None] = []
_READER_LOCK = threading.Lock()


def word_reader() -> Embedder | None:
    """The first word reader installed, or None (the floor then reads words with the search's
    own embedder). Looked for once per process, under a lock: the MCP server answers in
    worker threads, and each would otherwise load the model."""
    with _READER_LOCK:
        if not _READER:
            _READER.append(_first_reader())
        return _READER[0]


def _first_reader() -> Embedder | None:
    for model in WORD_READERS:
        try:
            return get_embedder(model)
        except SchemawiseError:
            continue  # not installed
        except Exception as exc:
            # Installed but broken (a shared library missing, a corrupt model or tokenizer
            # file: onnxruntime, tokenizers and safetensors each raise their own types): the
            # floor falls back rather than failing every question.
            log.warning("word reader %s could not load: %s", model, exc)
            continue
    return None


def backoff_seconds(
    attempt: int, base: float = 0.5, cap: float = 60.0, jitter: float = 0.5
) -> float:
    """Exponential backoff with jitter; deterministic enough to test, random enough to spread."""
    import random

    delay = min(cap, base * (2.0 ** max(0, attempt - 1)))
    return float(delay * (1 - jitter + jitter * random.random()))


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Unit length, so that cosine distance is well behaved (zero vectors stay zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    result: np.ndarray = (vectors / norms).astype(np.float32)
    return result
