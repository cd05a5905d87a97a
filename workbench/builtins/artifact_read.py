"""The ``artifact_read`` built-in: a line or byte range of an artifact a receipt named.

Head-and-tail previews leave out the middle; the complete value is an artifact file, and this
tool reads any part of it back, bounded like any preview. Only regular files under this
registry's artifacts directory can be read: anything else is ``invalid_args`` on ``path``. The
file is opened one component at a time from a descriptor of the artifacts directory, never
through a symbolic link that leaves it, and read from the descriptor that was checked (see
``workbench.builtins.beneath``). Artifacts may hold any bytes; invalid UTF-8 shows as
replacement characters.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from workbench.builtins.paths import check_characters, open_parts
from workbench.builtins.reading import byte_span, file_result, line_span, span_preview
from workbench.envelope import ErrorKind, ToolFailure
from workbench.output import ArtifactStore

ArtifactRead = Callable[..., dict[str, Any]]
HINT = "copy the path from the `full ...:` line of a cut receipt"


def _not_an_artifact() -> ToolFailure:
    return ToolFailure(
        ErrorKind.INVALID_ARGS,
        "`path` was refused: it is not an artifact written by this workbench.",
        field="path",
        expected="an artifact path exactly as a receipt printed it",
        recovery_hint=HINT,
    )


def artifact_parts(store: ArtifactStore, text: str) -> tuple[tuple[str, ...], str]:
    """The components of an artifact path below the store's directory, and the path as
    receipts print it; a ``ToolFailure`` for anything else. Decided from the text alone."""
    check_characters(text, "path")
    prefix = Path(store.ref(store.root).path)  # how receipts name the artifacts directory
    given = Path(text)
    if given.is_absolute():
        candidate = given
    elif prefix.is_absolute():
        candidate = Path.cwd() / given
    else:
        depth = len(prefix.parts)
        candidate = (store.root.parents[depth - 1] if depth else store.root) / given
    lexical = Path(os.path.normpath(candidate))
    if not lexical.is_relative_to(store.root) or lexical == store.root:
        raise _not_an_artifact()
    parts = lexical.relative_to(store.root).parts
    return parts, (prefix / Path(*parts)).as_posix()


def make_artifact_read(store: ArtifactStore, budget: int) -> ArtifactRead:
    """The ``artifact_read`` body, bound to an artifact store and a text budget."""

    def artifact_read(
        path: str,
        offset: Annotated[int | None, Field(ge=1)] = None,
        limit: Annotated[int | None, Field(ge=1)] = None,
        byte_offset: Annotated[int | None, Field(ge=0)] = None,
        byte_limit: Annotated[int | None, Field(ge=1)] = None,
    ) -> dict[str, Any]:
        """Read part of a saved output file that a cut receipt pointed to.

        Give a line range (offset, limit) or a byte range (byte_offset, byte_limit), not both.
        Only files under the artifacts directory are read, never through a symbolic link that
        leads out of it (a hard link cannot be told apart from its file).

        Args:
            path: The artifact path exactly as the receipt printed it, e.g.
                ".workbench/artifacts/call_3f9c2a1b7d4e/stdout.log".
            offset: First line to read (1-based). Default: 1.
            limit: Most lines to read. Default: to the end (long ranges are cut to head and
                tail).
            byte_offset: First byte to read (0-based), for a byte range.
            byte_limit: Most bytes to read from byte_offset.
        """
        parts, shown = artifact_parts(store, path)
        bytes_mode = byte_offset is not None or byte_limit is not None
        if bytes_mode and (offset is not None or limit is not None):
            raise ToolFailure(
                ErrorKind.INVALID_ARGS,
                "Give a line range (offset, limit) or a byte range (byte_offset, byte_limit), "
                "not both.",
                field="byte_offset" if offset is None else "offset",
                expected="either offset/limit or byte_offset/byte_limit",
            )
        missing = ToolFailure(
            ErrorKind.NOT_FOUND,
            "No artifact exists at that path.",
            field="path",
            recovery_hint=HINT,
        )
        with open_parts(store.root, parts, not_found=missing) as opened:
            if opened.is_dir:
                raise missing
            if not opened.is_regular:
                raise _not_an_artifact()
            if bytes_mode:
                span = byte_span(opened.fd, byte_offset or 0, byte_limit)
            else:
                span = line_span(opened.fd, offset or 1, limit)
            preview = span_preview(opened.fd, span, budget)
        return file_result(shown, span, preview, bytes_mode=bytes_mode)

    return artifact_read
