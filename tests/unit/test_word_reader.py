"""The relevance floor's word reader (index/embed.py `word_reader`): the first model of
`WORD_READERS` that is installed, else None, so that the floor falls back to the search's
embedder and its own bar."""

from __future__ import annotations

import pytest

from schemawise.index import embed


@pytest.fixture(autouse=True)
def fresh_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embed, "_READER", [])


def test_no_reader_installed_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embed, "WORD_READERS", ("no-such-model",))
    assert embed.word_reader() is None


def test_the_first_reader_that_loads_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    # The default embedder stands in for an installed reader: no model file is needed.
    monkeypatch.setattr(embed, "WORD_READERS", ("no-such-model", embed.DEFAULT_MODEL))
    reader = embed.word_reader()
    assert reader is not None and reader.name == embed.DEFAULT_MODEL
    # Looked for once: the same object again.
    assert embed.word_reader() is reader


def test_a_reader_installed_but_broken_is_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    # A shared library missing from an onnxruntime install raises ImportError, not the
    # project's own error: the floor falls back instead of failing every question.
    real = embed.get_embedder

    class FailError(Exception):  # onnxruntime's own errors derive from Exception alone
        pass

    def broken(model: str | None = None) -> embed.Embedder:
        if model == "broken-reader":
            raise ImportError("libonnxruntime.so.1: cannot open shared object file")
        if model == "corrupt-reader":
            raise FailError("[ONNXRuntimeError] : 1 : FAIL : Load model failed")
        return real(model)

    monkeypatch.setattr(embed, "get_embedder", broken)
    readers = ("broken-reader", "corrupt-reader", embed.DEFAULT_MODEL)
    monkeypatch.setattr(embed, "WORD_READERS", readers)
    reader = embed.word_reader()
    assert reader is not None and reader.name == embed.DEFAULT_MODEL


def test_threads_asking_at_once_load_one_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    loads: list[str] = []
    real = embed.get_embedder

    def counted(model: str | None = None) -> embed.Embedder:
        loads.append(str(model))
        return real(model)

    monkeypatch.setattr(embed, "get_embedder", counted)
    monkeypatch.setattr(embed, "WORD_READERS", (embed.DEFAULT_MODEL,))
    threads = [threading.Thread(target=embed.word_reader) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert loads == [embed.DEFAULT_MODEL]
