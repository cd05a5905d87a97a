"""Artifacts: files holding complete output, referenced from envelopes by path only (seed 001).

The store owns one directory (``.workbench/artifacts/`` beside the history by default) with a
subdirectory per call. Only files under that directory can be read back through the store, so
``artifact_read`` can never become a way to read arbitrary files.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
from pathlib import Path

from workbench._envelope import ArtifactRef

_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


class ArtifactStore:
    """The directory artifacts are written to, and the only place they are read back from."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        if root is None:
            root = tempfile.mkdtemp(prefix="workbench-artifacts-")
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


class ArtifactSink:
    """The ordered artifacts of one call; an index into it is what a result's
    ``stdout_artifact: 0`` means."""

    def __init__(self, store: ArtifactStore, call_id: str) -> None:
        self.store = store
        self.call_id = call_id
        self._paths: list[Path] = []

    def write(self, name: str, data: str | bytes) -> int:
        """Write a whole artifact; returns its index in the envelope's ``artifacts``."""
        path = self.store.new_path(self.call_id, name)
        if isinstance(data, str):
            path.write_text(data, encoding="utf-8")
        else:
            path.write_bytes(data)
        return self.adopt(path)

    def adopt(self, path: Path) -> int:
        """Reference a file already under the store (a spilled stream); returns its index."""
        resolved = path.resolve()
        if resolved in self._paths:
            return self._paths.index(resolved)
        self._paths.append(resolved)
        return len(self._paths) - 1

    def path(self, index: int) -> Path:
        """The file of an artifact by index."""
        return self._paths[index]

    @property
    def refs(self) -> tuple[ArtifactRef, ...]:
        """Path-only references, in index order."""
        return tuple(self.store.ref(path) for path in self._paths)

    def __len__(self) -> int:
        return len(self._paths)
