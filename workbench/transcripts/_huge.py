"""Tool results too large to hold in a history row, kept whole as artifact files.

A result longer than ``HUGE_CHARS`` is written, a slice at a time, to an artifact file (under
``artifacts/`` beside the history file, or a temporary directory for a history in memory); its
row keeps the first ``HEAD_CHARS`` and the last ``TAIL_CHARS`` with a line naming the artifact,
``receipt_chars`` still counts every character of it, and rules read the kept part. Building a
row then costs the kept part, not the result: the import holds the result once, as read, and
the row a bounded preview of it.
"""

from __future__ import annotations

from pathlib import Path

from workbench.output import ArtifactStore

HUGE_CHARS = 8 << 20
"""A result longer than this many characters is kept as an artifact, not in its row."""

HEAD_CHARS = 64 << 10
"""Characters of a huge result's start its row keeps."""

TAIL_CHARS = 16 << 10
"""Characters of a huge result's end its row keeps."""

SLICE_CHARS = 1 << 20
"""Characters encoded and written at a time: what writing the artifact adds to memory."""


class HugeResults:
    """Where an import keeps its huge results: one ``ArtifactStore``, made when first needed."""

    def __init__(self, directory: Path | None) -> None:
        self._root = None if directory is None else directory / "artifacts"
        self._store: ArtifactStore | None = None

    def keep(self, receipt: str, call_id: str) -> tuple[str, list[str], str]:
        """``receipt`` kept whole in an artifact: (the preview its row holds, the artifact
        paths, the warning that says so). A failed write (a full disk) is named in the
        warning, with how much of the result the artifact holds."""
        if self._store is None:
            self._store = ArtifactStore(self._root)
        written, problem, path = 0, None, None
        try:
            path = self._store.new_path(call_id, "result.txt")
            with path.open("w", encoding="utf-8", errors="backslashreplace", newline="") as file:
                for start in range(0, len(receipt), SLICE_CHARS):
                    file.write(receipt[start : start + SLICE_CHARS])
                    written = min(len(receipt), start + SLICE_CHARS)
        except OSError as exc:
            problem = exc.strerror or str(exc)
        where = "no artifact" if path is None else str(self._store.ref(path).path)
        note = (
            f"the result ({len(receipt):,} characters) is kept whole in the artifact {where}; "
            f"the row holds its first {HEAD_CHARS:,} and last {TAIL_CHARS:,}"
        )
        if problem is not None:
            note = (
                f"the result ({len(receipt):,} characters) could not be kept whole: {where} "
                f"holds its first {written:,} ({problem}); the row holds its first "
                f"{HEAD_CHARS:,} and last {TAIL_CHARS:,}"
            )
        cut = len(receipt) - HEAD_CHARS - TAIL_CHARS
        marker = f"\n[result cut: {cut:,} characters kept in the artifact {where}]\n"
        preview = receipt[:HEAD_CHARS] + marker + receipt[-TAIL_CHARS:]
        return preview, ([] if path is None else [where]), note
