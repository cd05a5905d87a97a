"""The complete output of one stream, kept whole while memory stays bounded.

A spool holds bytes in memory while they are few; past ``memory_limit`` it spills them to an
artifact file and keeps appending there, holding only a bounded tail in memory. The file is the
complete output, byte for byte, and is written once: projection adopts it instead of copying it.
A spilled file is listed among the call's artifacts the moment it exists.

A write the disk refuses (full, an I/O error, the directory removed) never reaches the tool:
the spool stops writing the file, keeps counting what was produced and keeping the tail in
memory, and says how much the file holds (``kept``) and why the rest is missing (``loss``).
"""

from __future__ import annotations

import threading
from collections import deque
from pathlib import Path
from typing import BinaryIO, Literal

from workbench.output._artifacts import ArtifactSink

Stream = Literal["stdout", "stderr", "log"]
"""The streams of a call's output."""

MEMORY_LIMIT = 1 << 20
TAIL_LIMIT = 64 << 10
HEAD_KEPT = 256 << 10


class Spool:
    """One stream's complete output: in memory, or in an artifact file once it grows."""

    def __init__(
        self,
        sink: ArtifactSink,
        name: str,
        *,
        memory_limit: int = MEMORY_LIMIT,
        tail_limit: int = TAIL_LIMIT,
    ) -> None:
        self._sink = sink
        self._name = name
        self._memory_limit = memory_limit
        self._tail_limit = tail_limit
        self._buffer = bytearray()
        # Recent chunks, kept whole: appending never copies the bytes already held.
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self._head = b""
        self._file: BinaryIO | None = None
        self._path: Path | None = None
        self._size = 0
        self._kept = 0
        self._loss: str | None = None
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        """Bytes written so far."""
        return self._size

    @property
    def kept(self) -> int:
        """Bytes actually held (in memory, or in the file once spilled)."""
        return self._kept

    @property
    def loss(self) -> str | None:
        """Why the file holds fewer bytes than were written (None while it holds them all)."""
        with self._lock:
            self._check_file()
            return self._loss

    @property
    def spilled(self) -> bool:
        """True once the output lives in a file rather than in memory."""
        return self._path is not None

    def write(self, data: bytes) -> None:
        """Append bytes (thread-safe). Never raises for a disk that refuses them."""
        if not data:
            return
        with self._lock:
            self._size += len(data)
            if self._path is None and len(self._buffer) + len(data) <= self._memory_limit:
                self._buffer += data
                self._kept += len(data)
                return
            if self._path is None:
                self._spill()
            elif self._file is None and self._loss is None:
                raise ValueError("spool is closed")
            self._append(data)
            self._keep(bytes(data))

    def _spill(self) -> None:
        self._path, failure = self._sink.reserve(self._name)
        self._sink.adopt(self._path, self)
        self._keep(bytes(self._buffer[-self._tail_limit :]))
        # The head stays in memory too: previews read it, and reopening a large file that is
        # still being written measured slower than the whole rest of the preview.
        self._head = bytes(self._buffer[:HEAD_KEPT])
        buffered, self._buffer, self._kept = bytes(self._buffer), bytearray(), 0
        if failure is not None:
            self._lose(failure)
            return
        try:
            self._file = self._path.open("wb")
        except OSError as exc:
            self._lose(exc)
            return
        self._append(buffered)

    def _append(self, data: bytes) -> None:
        if self._file is None:
            return  # the file was lost; ``loss`` says why and ``kept`` how much it holds
        try:
            self._file.write(data)
        except OSError as exc:
            self._lose(exc)
        else:
            self._kept += len(data)

    def _lose(self, exc: OSError) -> None:
        self._loss = exc.strerror or type(exc).__name__
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass  # closing flushes what the disk already refused; ``loss`` names it
            self._file = None
        if self._path is not None and self._path.exists():
            try:
                self._kept = self._path.stat().st_size
            except OSError:
                self._kept = 0

    def head(self, limit: int) -> bytes:
        """The first ``limit`` bytes."""
        with self._lock:
            if self._path is None:
                return bytes(self._buffer[:limit])
            if limit <= len(self._head):
                return self._head[:limit]
            self._flush()
            path = self._path
        with path.open("rb") as handle:
            return handle.read(limit)

    def tail(self, limit: int) -> bytes:
        """The last ``limit`` bytes (at most the retained tail once spilled, which is enough for
        any preview)."""
        with self._lock:
            if not limit:
                return b""
            if self._path is None:
                return bytes(self._buffer[-limit:])
            return b"".join(self._tail)[-limit:]

    def _keep(self, chunk: bytes) -> None:
        self._tail.append(chunk)
        self._tail_size += len(chunk)
        while self._tail_size - len(self._tail[0]) >= self._tail_limit:
            self._tail_size -= len(self._tail.popleft())

    def read(self) -> bytes:
        """Everything written; reads the file back when spilled. A lost file gives what it
        holds, or the head and tail kept in memory when it holds nothing."""
        with self._lock:
            if self._path is None:
                return bytes(self._buffer)
            self._flush()
            path, lost = self._path, self._loss is not None
            fallback = self._head + b"".join(self._tail)
        try:
            data = path.read_bytes()
        except OSError:
            if not lost:
                raise
            return fallback
        return data if data or not lost else fallback

    def text(self) -> str:
        """Everything written, decoded as UTF-8 (invalid bytes replaced)."""
        return self.read().decode("utf-8", "replace")

    def artifact(self) -> int:
        """The artifact index of the complete output, writing it once if still in memory."""
        with self._lock:
            if self._path is not None:
                self._flush()
                self._check_file()
                return self._sink.adopt(self._path, self)
            data = bytes(self._buffer)
        return self._sink.write(self._name, data)

    def close(self) -> None:
        """Flush and close the file, if any; the spool stays readable."""
        with self._lock:
            if self._file is not None:
                try:
                    self._file.close()
                except OSError as exc:
                    self._lose(exc)
                self._file = None
            self._check_file()

    def _check_file(self) -> None:
        """A file whose directory was removed still takes writes through its open handle, and
        keeps none of them: notice it, so the artifact is not claimed complete."""
        if self._path is not None and self._loss is None and not self._path.exists():
            self._loss = "its file or directory was removed while it was written"
            self._kept = 0

    def _flush(self) -> None:
        if self._file is not None:
            try:
                self._file.flush()
            except OSError as exc:
                self._lose(exc)
