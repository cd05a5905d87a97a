"""The bounded reader behind file_read and artifact_read, checked against plain Python slicing."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.builtins.reading import byte_span, line_span, span_preview

# Lines of a few lengths, blank lines, and a possibly unterminated last line.
PIECES = st.sampled_from(["a", "b", "\n", "ab\n", "aaaa\n", "\n\n", "é\n"])
TEXT = st.lists(PIECES, max_size=80).map("".join)
BLOCKS = st.integers(min_value=1, max_value=9)
LIMITS = st.none() | st.integers(min_value=1, max_value=40)


def written(text: str) -> Path:
    handle = tempfile.NamedTemporaryFile("w", delete=False, suffix=".txt")  # noqa: SIM115
    with handle:
        handle.write(text)
    return Path(handle.name)


@settings(max_examples=300, deadline=None)
@given(TEXT, st.data(), LIMITS, BLOCKS)
def test_a_line_span_is_the_lines_python_would_select(text, data, limit, block):
    lines = text.splitlines(keepends=True)
    offset = data.draw(st.integers(min_value=1, max_value=max(1, len(lines))))
    path = written(text)
    span = line_span(path, offset, limit, block_size=block)
    chosen = lines[offset - 1 : None if limit is None else offset - 1 + limit]
    assert span_preview(path, span, 10_000).text == "".join(chosen)
    assert (span.first_line, span.lines, span.total_lines) == (offset, len(chosen), len(lines))
    path.unlink()


@settings(max_examples=300, deadline=None)
@given(TEXT, st.data(), LIMITS, BLOCKS)
def test_a_byte_span_knows_its_lines(text, data, limit, block):
    raw = text.encode()
    start = data.draw(st.integers(min_value=0, max_value=len(raw)))
    path = written(text)
    span = byte_span(path, start, limit, block_size=block)
    end = len(raw) if limit is None else min(len(raw), start + limit)
    piece = raw[start:end].decode("utf-8", "replace")
    assert span_preview(path, span, 10_000).text == piece
    assert span.first_line == raw[:start].count(b"\n") + 1
    assert span.lines == len(piece.splitlines())
    assert span.total_lines == len(text.splitlines())
    path.unlink()
