"""The OpenAI-compatible embeddings client against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from schemawise.index.embed import EmbeddingError, OpenAIEmbedder


class Handler(BaseHTTPRequestHandler):
    mode = "ok"

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        texts = body["input"]
        if Handler.mode == "429":
            self.send_response(429)
            self.send_header("Retry-After", "7")
            self.end_headers()
            return
        if Handler.mode == "500":
            self.send_response(500)
            self.end_headers()
            return
        dim = 3 if Handler.mode != "dim" else 2
        count = len(texts) if Handler.mode != "count" else len(texts) - 1
        data = [{"index": i, "embedding": [1.0, float(i), 2.0][:dim]} for i in range(count)]
        if Handler.mode == "nan":
            data[0]["embedding"][0] = float("nan")
        payload = json.dumps({"data": list(reversed(data)), "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture()
def endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_vectors_come_back_in_input_order_and_normalised(endpoint: str) -> None:
    Handler.mode = "ok"
    vectors = OpenAIEmbedder("m", 3, base_url=endpoint).embed(["a", "b", "c"])
    assert vectors.shape == (3, 3)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert vectors[1][1] > vectors[0][1]  # index 1 carries 1.0 in its middle component


@pytest.mark.parametrize("mode", ["429", "500", "count", "dim", "nan"])
def test_failures_become_embedding_errors(endpoint: str, mode: str) -> None:
    Handler.mode = mode
    with pytest.raises(EmbeddingError) as info:
        OpenAIEmbedder("m", 3, base_url=endpoint).embed(["a", "b"])
    assert info.value.retryable
    if mode == "429":
        assert info.value.retry_after == 7.0


def test_timeouts_are_retryable() -> None:
    with pytest.raises(EmbeddingError) as info:
        OpenAIEmbedder("m", 3, base_url="http://127.0.0.1:9/v1", timeout=0.5).embed(["a"])
    assert info.value.retryable
