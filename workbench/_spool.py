"""The complete output of one stream, kept whole while memory stays bounded.

A spool holds bytes in memory while they are few; past ``memory_limit`` it spills them to an
artifact file and keeps appending there, holding only a bounded tail in memory. The file is the
complete output, byte for byte, and is written once: projection adopts it instead of copying it.
"""

from __future__ import annotations

import threading
from collections import deque
from pathlib import Path
from typing import BinaryIO

from workbench._artifacts import ArtifactSink

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
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        """Bytes written so far."""
        return self._size

    @property
    def spilled(self) -> bool:
        """True once the output lives in a file rather than in memory."""
        return self._path is not None

    def write(self, data: bytes) -> None:
        """Append bytes (thread-safe)."""
        if not data:
            return
        with self._lock:
            self._size += len(data)
            if self._path is None and len(self._buffer) + len(data) <= self._memory_limit:
                self._buffer += data
                return
            if self._path is None:
                self._spill()
            if self._file is None:
                raise ValueError("spool is closed")
            self._file.write(data)
            self._keep(bytes(data))

    def _spill(self) -> None:
        self._path = self._sink.store.new_path(self._sink.call_id, self._name)
        self._file = self._path.open("wb")
        self._file.write(self._buffer)
        self._keep(bytes(self._buffer[-self._tail_limit :]))
        # The head stays in memory too: previews read it, and reopening a large file that is
        # still being written measured slower than the whole rest of the preview.
        self._head = bytes(self._buffer[:HEAD_KEPT])
        self._buffer = bytearray()

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
        """Everything written; reads the file back when spilled."""
        with self._lock:
            if self._path is None:
                return bytes(self._buffer)
            self._flush()
            path = self._path
        return path.read_bytes()

    def text(self) -> str:
        """Everything written, decoded as UTF-8 (invalid bytes replaced)."""
        return self.read().decode("utf-8", "replace")

    def artifact(self) -> int:
        """The artifact index of the complete output, writing it once if still in memory."""
        with self._lock:
            if self._path is not None:
                self._flush()
                return self._sink.adopt(self._path)
            data = bytes(self._buffer)
        return self._sink.write(self._name, data)

    def close(self) -> None:
        """Flush and close the file, if any; the spool stays readable."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def _flush(self) -> None:
        if self._file is not None:
            self._file.flush()
