"""Artifacts: files holding complete output, referenced from envelopes by path only.

The store owns one directory (``.workbench/artifacts/`` beside the history by default) with a
subdirectory per call. Only files under that directory can be read back through the store, so
``artifact_read`` can never become a way to read arbitrary files.
"""

from __future__ import annotations

import dataclasses
import os
import re
import threading
from pathlib import Path
from typing import Protocol

from workbench._scratch import scratch_directory
from workbench.envelope import ArtifactRef

_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


class ArtifactStore:
    """The directory artifacts are written to, and the only place they are read back from."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        if root is None:
            root = scratch_directory("workbench-artifacts-")
        self.root = Path(root).resolve()
        self._base = Path.cwd().resolve()
        self._lock = threading.Lock()

    def call_dir(self, call_id: str) -> Path:
        """The directory holding one call's artifacts (created on demand)."""
        path = self.root / _SAFE_NAME.sub("_", call_id)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def new_path(self, call_id: str, name: str) -> Path:
        """A fresh file path for an artifact of a call; an existing name gets a numeric suffix."""
        directory = self.call_dir(call_id)
        stem = _SAFE_NAME.sub("_", name).strip("._") or "artifact"
        with self._lock:
            candidate, counter = directory / stem, 1
            while candidate.exists():
                counter += 1
                candidate = directory / f"{Path(stem).stem}-{counter}{Path(stem).suffix}"
            candidate.touch()
        return candidate

    def ref(self, path: Path) -> ArtifactRef:
        """The path-only reference written into envelopes: relative to the working directory
        when the artifact lies beneath it, absolute otherwise."""
        resolved = path.resolve()
        try:
            return ArtifactRef(path=str(resolved.relative_to(self._base)))
        except ValueError:
            return ArtifactRef(path=str(resolved))

    def resolve(self, reference: str | ArtifactRef) -> Path:
        """The file behind a reference, refusing anything this store did not write.

        Raises ``PermissionError`` for a path outside the store and ``FileNotFoundError`` for a
        store path that does not exist.
        """
        text = reference.path if isinstance(reference, ArtifactRef) else reference
        candidate = Path(text)
        if not candidate.is_absolute():
            candidate = self._base / candidate
        resolved = candidate.resolve()
        if not resolved.is_relative_to(self.root) or resolved == self.root:
            raise PermissionError(13, "not an artifact written by this workbench", text)
        if not resolved.is_file():
            raise FileNotFoundError(2, "No such artifact", text)
        return resolved


@dataclasses.dataclass(frozen=True)
class Shortfall:
    """An artifact that holds less than was produced: a full disk, an I/O error, a removed
    directory."""

    name: str
    produced: int
    kept: int
    reason: str

    def sentence(self) -> str:
        """The warning an envelope carries for it."""
        return (
            f"{self.name}: {self.produced} bytes produced, only {self.kept} kept in its artifact "
            f"({self.reason})"
        )


class Measured(Protocol):
    """Something whose artifact may be short (a spool): bytes produced, bytes kept, and why
    the rest was not."""

    @property
    def size(self) -> int: ...

    @property
    def kept(self) -> int: ...

    @property
    def loss(self) -> str | None: ...


class ArtifactSink:
    """The ordered artifacts of one call; an index into it is what a result's
    ``stdout_artifact: 0`` means. It also knows which of them are short, and by how much."""

    def __init__(self, store: ArtifactStore, call_id: str) -> None:
        self.store = store
        self.call_id = call_id
        self._paths: list[Path] = []
        self._short: dict[int, Shortfall] = {}
        self._measured: dict[int, Measured] = {}

    def reserve(self, name: str) -> tuple[Path, OSError | None]:
        """A fresh path for an artifact, and the error if it could not be created (the path
        is then where it would have been)."""
        try:
            return self.store.new_path(self.call_id, name), None
        except OSError as exc:
            stem = _SAFE_NAME.sub("_", name).strip("._") or "artifact"
            return self.store.root / _SAFE_NAME.sub("_", self.call_id) / stem, exc

    def write(self, name: str, data: str | bytes) -> int:
        """Write a whole artifact; returns its index in the envelope's ``artifacts``. A short
        write (a full disk, an I/O error) is kept as far as it got and named by ``shortfall``."""
        payload = data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data
        path, failure = self.reserve(name)
        kept = 0
        if failure is None:
            kept, failure = _write_all(path, payload)
        index = self.adopt(path)
        if failure is not None:
            self._short[index] = Shortfall(path.name, len(payload), kept, _reason(failure))
        return index

    def adopt(self, path: Path, measured: Measured | None = None) -> int:
        """Reference a file already under the store (a spilled stream); returns its index.
        ``measured`` (the spool writing it) says later whether the file is short."""
        resolved = path.resolve()
        if resolved in self._paths:
            index = self._paths.index(resolved)
        else:
            self._paths.append(resolved)
            index = len(self._paths) - 1
        if measured is not None:
            self._measured[index] = measured
        return index

    def shortfall(self, index: int) -> Shortfall | None:
        """How an artifact falls short of what was produced, or None when it is complete."""
        if index in self._short:
            return self._short[index]
        measured = self._measured.get(index)
        if measured is None or measured.loss is None:
            return None
        return Shortfall(self._paths[index].name, measured.size, measured.kept, measured.loss)

    def shortfalls(self) -> list[Shortfall]:
        """Every short artifact, in index order."""
        found = (self.shortfall(index) for index in range(len(self._paths)))
        return [shortfall for shortfall in found if shortfall is not None]

    def path(self, index: int) -> Path:
        """The file of an artifact by index."""
        return self._paths[index]

    @property
    def refs(self) -> tuple[ArtifactRef, ...]:
        """Path-only references, in index order."""
        return tuple(self.store.ref(path) for path in self._paths)

    def __len__(self) -> int:
        return len(self._paths)


def _write_all(path: Path, payload: bytes) -> tuple[int, OSError | None]:
    """Write ``payload`` to ``path``; the bytes that reached the file, and the error if not
    all did."""
    kept = 0
    try:
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_CREAT, 0o644)
    except OSError as exc:
        return 0, exc
    try:
        view = memoryview(payload)
        while kept < len(payload):
            kept += os.write(fd, view[kept:])
    except OSError as exc:
        return kept, exc
    finally:
        os.close(fd)
    return kept, None


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__
