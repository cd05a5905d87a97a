"""The bounded reader behind file_read and artifact_read, checked against plain Python slicing."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.builtins.reading import byte_span, line_span, span_preview

TEXT = st.text(alphabet="ab\n", max_size=60)
BLOCKS = st.integers(min_value=1, max_value=9)


def written(text: str) -> Path:
    handle = tempfile.NamedTemporaryFile("w", delete=False, suffix=".txt")  # noqa: SIM115
    with handle:
        handle.write(text)
    return Path(handle.name)


@settings(max_examples=300, deadline=None)
@given(TEXT, st.integers(min_value=1, max_value=12), st.none() | st.integers(1, 12), BLOCKS)
def test_a_line_span_is_the_lines_python_would_select(text, offset, limit, block):
    path = written(text)
    lines = text.splitlines(keepends=True)
    if lines and offset > len(lines):
        return
    span = line_span(path, offset, limit, block_size=block)
    chosen = lines[offset - 1 : None if limit is None else offset - 1 + limit]
    assert span_preview(path, span, 10_000).text == "".join(chosen)
    assert (span.first_line, span.lines, span.total_lines) == (offset, len(chosen), len(lines))
    path.unlink()


@settings(max_examples=300, deadline=None)
@given(TEXT, st.integers(min_value=0, max_value=60), st.none() | st.integers(1, 20), BLOCKS)
def test_a_byte_span_knows_its_lines(text, start, limit, block):
    path = written(text)
    data = text.encode()
    if start > len(data):
        return
    span = byte_span(path, start, limit, block_size=block)
    end = len(data) if limit is None else min(len(data), start + limit)
    piece = data[start:end].decode()
    assert span_preview(path, span, 10_000).text == piece
    assert span.first_line == data[:start].count(b"\n") + 1
    assert span.lines == len(piece.splitlines())
    assert span.total_lines == len(text.splitlines())
    path.unlink()
