"""The ``artifact_read`` built-in: a line or byte range of an artifact a receipt named.

Head-and-tail previews leave out the middle; the complete value is an artifact file, and this
tool reads any part of it back, bounded like any preview. Only files under this registry's
artifacts directory can be read (``ArtifactStore.resolve``): anything else is ``invalid_args`` on
``path``. Artifacts may hold any bytes; invalid UTF-8 shows as replacement characters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from workbench._artifacts import ArtifactStore
from workbench._builders import ToolFailure
from workbench._errors import ErrorKind
from workbench.builtins.reading import byte_span, file_result, line_span, span_preview

ArtifactRead = Callable[..., dict[str, Any]]


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

        Args:
            path: The artifact path exactly as the receipt printed it, e.g.
                ".workbench/artifacts/call_3f9c2a1b7d4e/stdout.log".
            offset: First line to read (1-based). Default: 1.
            limit: Most lines to read. Default: to the end (long ranges are cut to head and
                tail).
            byte_offset: First byte to read (0-based), for a byte range.
            byte_limit: Most bytes to read from byte_offset.
        """
        try:
            real = store.resolve(path)
        except PermissionError:
            raise ToolFailure(
                ErrorKind.INVALID_ARGS,
                f"`path` was refused: `{path}` is not an artifact written by this workbench.",
                field="path",
                expected="an artifact path exactly as a receipt printed it",
                recovery_hint="copy the path from the `full ...:` line of a cut receipt",
            ) from None
        except FileNotFoundError:
            raise ToolFailure(
                ErrorKind.NOT_FOUND,
                f"No artifact `{path}` exists.",
                field="path",
                recovery_hint="copy the path from the `full ...:` line of a cut receipt",
            ) from None
        bytes_mode = byte_offset is not None or byte_limit is not None
        if bytes_mode and (offset is not None or limit is not None):
            raise ToolFailure(
                ErrorKind.INVALID_ARGS,
                "Give a line range (offset, limit) or a byte range (byte_offset, byte_limit), "
                "not both.",
                field="byte_offset" if offset is None else "offset",
                expected="either offset/limit or byte_offset/byte_limit",
            )
        if bytes_mode:
            span = byte_span(real, byte_offset or 0, byte_limit)
        else:
            span = line_span(real, offset or 1, limit)
        shown = store.ref(real).path
        return file_result(shown, span, span_preview(real, span, budget), bytes_mode=bytes_mode)

    return artifact_read
