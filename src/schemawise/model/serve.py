"""The local model's server: llama.cpp's OpenAI-compatible server on the loopback interface.

Like the embedded PostgreSQL, the server outlives the command that started it, so the next
command reuses it, until `schemawise model stop`. Its pid, port and model are kept in
`<home>/models/server.json`; a file lock serialises start and stop across processes. A state
file is believed only while its pid is alive and runs the very command line recorded in it
(a recycled pid is not our server), and a reused server must also answer on its port.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from schemawise.errors import LocalModelError
from schemawise.model.catalog import ModelSpec, get_model
from schemawise.model.install import is_installed, models_dir

HOST = "127.0.0.1"
START_TIMEOUT = 180.0
STOP_TIMEOUT = 15.0

# The runtime's default build compiles for every instruction the CPU lists. A virtual machine
# can list some (AMX, AVX-512) that its hypervisor does not let a process use: the server then
# loads the model and dies on its first answer. A portable build avoids that.
PORTABLE_BUILD = (
    'CMAKE_ARGS="-DGGML_OPENMP=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON '
    '-DGGML_FMA=ON -DGGML_F16C=ON"'
)

RUNTIME_HINT = (
    "Install the runtime, built without OpenMP (its OpenMP build is about 20 times slower on "
    "few cores): CMAKE_ARGS=\"-DGGML_OPENMP=OFF\" pip install 'schemawise[local]' "
    "(or `make model` in a checkout); the build takes several minutes. In a virtual machine "
    f"build it portably: {PORTABLE_BUILD} pip install 'schemawise[local]'."
)

# Servers started by this process: kept so that they are reaped when stopped (a dead child
# would linger as a zombie that still answers `kill -0`) and not reported as leaked.
_children: dict[int, subprocess.Popen[bytes]] = {}


@dataclass(frozen=True)
class ServerState:
    pid: int
    port: int
    size: str
    model: str
    """The name the server reports in /v1/models and expects in requests."""
    model_path: str
    log: str
    argv: list[str]
    started_at: float

    @property
    def base_url(self) -> str:
        """What an OpenAI client takes as its base URL."""
        return f"http://{HOST}:{self.port}/v1"


@dataclass(frozen=True)
class ServerStatus:
    running: bool
    base_url: str | None
    model: str | None
    size: str | None
    pid: int | None
    log: str
    answering: bool


def state_path(home: Path | None = None) -> Path:
    return models_dir(home) / "server.json"


def log_path(home: Path | None = None) -> Path:
    return models_dir(home) / "server.log"


@contextlib.contextmanager
def _lifecycle_lock(home: Path | None) -> Iterator[None]:
    with open(models_dir(home) / ".server.lock", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def read_state(home: Path | None = None) -> ServerState | None:
    try:
        data = json.loads(state_path(home).read_text())
        return ServerState(**data)
    except (OSError, ValueError, TypeError):
        return None


def _write_state(state: ServerState, home: Path | None) -> None:
    path = state_path(home)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(asdict(state), indent=2) + "\n")
    os.replace(temporary, path)


def _reaped(pid: int) -> bool:
    """True when `pid` is a child of ours that has exited (and is now reaped)."""
    child = _children.get(pid)
    if child is None:
        return False
    if child.poll() is None:
        return False
    del _children[pid]
    return True


def is_alive(state: ServerState) -> bool:
    """Whether the recorded process is alive and is the server that was started."""
    if _reaped(state.pid):
        return False
    try:
        os.kill(state.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # another user's process: a recycled pid, not ours
    cmdline = Path(f"/proc/{state.pid}/cmdline")
    if cmdline.exists():
        try:
            argv = cmdline.read_bytes().split(b"\0")
        except OSError:
            return False
        return [a.decode(errors="replace") for a in argv if a] == state.argv
    return True  # no /proc (macOS): the pid is the best evidence there is


def answers(base_url: str, timeout: float = 2.0) -> str | None:
    """The first model id the server at base_url lists, or None when it does not answer."""
    import httpx

    try:
        response = httpx.get(f"{base_url}/models", timeout=timeout)
        response.raise_for_status()
        data = response.json()["data"]
        return str(data[0]["id"]) if data else ""
    except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError):
        return None


def status(home: Path | None = None) -> ServerStatus:
    state = read_state(home)
    log = str(log_path(home))
    if state is None or not is_alive(state):
        return ServerStatus(False, None, None, None, None, log, False)
    answering = answers(state.base_url) is not None
    return ServerStatus(
        True, state.base_url, state.model, state.size, state.pid, state.log, answering
    )


def runtime_available() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


def require_runtime() -> None:
    if not runtime_available():
        raise LocalModelError(
            "The local model runtime (llama-cpp-python) is not installed.", RUNTIME_HINT
        )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((HOST, port))
        except OSError:
            return True
    return False


def default_threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def server_command(
    spec: ModelSpec, model_file: Path, port: int, n_ctx: int, n_threads: int
) -> list[str]:
    """llama-cpp-python's server; the chat template is the one the GGUF carries (Qwen's)."""
    return [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model_file),
        "--model_alias", spec.alias,
        "--host", HOST,
        "--port", str(port),
        "--n_ctx", str(n_ctx),
        "--n_threads", str(n_threads),
        "--n_threads_batch", str(n_threads),
    ]  # fmt: skip


def _log_tail(path: Path, chars: int = 1500) -> str:
    try:
        return path.read_text(errors="replace")[-chars:].strip()
    except OSError:
        return ""


def _terminate(pid: int, timeout: float) -> None:
    """SIGTERM, then SIGKILL after `timeout`; reaps it when it is our child."""
    child = _children.pop(pid, None)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if child is not None:
            if child.poll() is not None:
                return
        else:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    if child is not None:
        child.wait(timeout=5)


def start(
    size: str,
    home: Path | None = None,
    *,
    port: int | None = None,
    n_ctx: int | None = None,
    n_threads: int | None = None,
    timeout: float = START_TIMEOUT,
) -> ServerState:
    """Start a server for the model of this size (which must be installed); return its state.

    Reuses a live server of the same model; refuses to start a second one beside a live
    server of another model (one model at a time is what a small machine can hold).
    """
    spec = get_model(size)
    with _lifecycle_lock(home):
        running = read_state(home)
        if running is not None and is_alive(running):
            if running.size == spec.size and (port is None or port == running.port):
                if answers(running.base_url) is not None:
                    return running
                raise LocalModelError(
                    f"The local model server (pid {running.pid}) runs but does not answer "
                    f"on {running.base_url}.",
                    f"Look at {running.log}; `schemawise model stop` and start it again.",
                )
            raise LocalModelError(
                f"A local model server for {running.size} already runs on {running.base_url}.",
                "Stop it first with `schemawise model stop`.",
            )
        return _start_new(spec, home, port, n_ctx, n_threads, timeout)


def _start_new(
    spec: ModelSpec,
    home: Path | None,
    port: int | None,
    n_ctx: int | None,
    n_threads: int | None,
    timeout: float,
) -> ServerState:
    require_runtime()
    model_file = models_dir(home) / spec.file_name
    if not is_installed(spec, model_file):
        raise LocalModelError(
            f"{spec.title} is not installed in {model_file.parent}.",
            f"Run `schemawise model install --size {spec.size}` first.",
        )
    if port is not None and _port_in_use(port):
        raise LocalModelError(
            f"Port {port} on {HOST} is in use.", "Choose another with --port, or leave it out."
        )
    chosen_port = port if port is not None else free_port()
    argv = server_command(
        spec, model_file, chosen_port, n_ctx or spec.context_length, n_threads or default_threads()
    )
    log = log_path(home)
    with open(log, "wb") as log_handle:
        child = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log_handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # survives the command that started it, and its Ctrl-C
        )
    _children[child.pid] = child
    state = ServerState(
        pid=child.pid,
        port=chosen_port,
        size=spec.size,
        model=spec.alias,
        model_path=str(model_file),
        log=str(log),
        argv=argv,
        started_at=time.time(),
    )
    try:
        _wait_until_ready(state, child, timeout)
    except BaseException:
        _terminate(child.pid, STOP_TIMEOUT)
        raise
    _write_state(state, home)
    return state


def _wait_until_ready(state: ServerState, child: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if child.poll() is not None:
            raise LocalModelError(
                f"The local model server exited with code {child.returncode} while starting.\n"
                f"{_log_tail(Path(state.log))}",
                f"The whole log is in {state.log}.",
            )
        if answers(state.base_url, timeout=1.0) is not None:
            return
        time.sleep(0.25)
    raise LocalModelError(
        f"The local model server did not answer on {state.base_url} within {timeout:.0f} s; "
        "it was stopped.",
        f"Look at {state.log}; a busy machine may need a longer --timeout.",
    )


def stop(home: Path | None = None) -> bool:
    """Stop the server; False when none was running. The state file goes either way."""
    with _lifecycle_lock(home):
        state = read_state(home)
        if state is None:
            return False
        alive = is_alive(state)
        if alive:
            _terminate(state.pid, STOP_TIMEOUT)
        state_path(home).unlink(missing_ok=True)
        return alive


def death_report(home: Path | None = None) -> LocalModelError | None:
    """Why the recorded server is gone (its exit or signal and its log's end), or None while it
    lives or when none was recorded. For a model call that found nobody listening."""
    state = read_state(home)
    if state is None:
        return None
    child = _children.get(state.pid)  # before is_alive, which forgets a reaped child
    if is_alive(state):
        return None
    code = child.returncode if child is not None else None
    if code is not None and code < 0:
        names = {int(s): s.name for s in signal.Signals}
        how = f"was killed by {names.get(-code, f'signal {-code}')}"
    elif code is not None:
        how = f"exited with code {code}"
    else:
        how = "is gone"
    crashed = code is not None and -code in (signal.SIGSEGV, signal.SIGILL, signal.SIGBUS)
    hint = (
        "A crash on the first answer is usually a runtime built for instructions this machine "
        f"does not allow; rebuild it portably: {PORTABLE_BUILD} pip install --force-reinstall "
        "--no-cache-dir 'llama-cpp-python[server]==0.3.36'."
        if crashed
        else f"Look at {state.log}; `schemawise model serve` starts it again."
    )
    return LocalModelError(
        f"The local model server (pid {state.pid}) {how}.\n{_log_tail(Path(state.log), 600)}",
        hint,
    )


def ensure_serving(size: str = "1.5b", home: Path | None = None) -> str:
    """The base URL of a server for the model of this size, started if need be."""
    return start(size, home).base_url
