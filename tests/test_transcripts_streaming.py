"""An MCP capture in JSON lines is read line by line: memory stays near the size of one message
(plus the calls still waiting for their result), whatever the size of the file."""

from __future__ import annotations

import tracemalloc

import pytest

import workbench as wb
from benchmarks import transcripts as synthetic
from workbench.transcripts import TranscriptWarning
from workbench.transcripts._source import open_source


def peak_of_import(tmp_path, calls: int) -> tuple[float, int, int]:
    """(peak Python allocation in bytes, file size, rows) of importing ``calls`` calls into a
    history file."""
    path = synthetic.write(tmp_path, "mcp_jsonl", calls)
    moved = path.rename(tmp_path / f"capture-{calls}.jsonl")
    tracemalloc.start()
    try:
        history = wb.transcripts.load(moved, history=tmp_path / f"history-{calls}.sqlite")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    rows = len(history)
    history.close()
    return peak, moved.stat().st_size, rows


def test_memory_does_not_grow_with_the_file(tmp_path):
    peak_of_import(tmp_path, 50)  # the first import pays for what it imports, not measured
    small_peak, small_size, small_rows = peak_of_import(tmp_path, 1_000)
    large_peak, large_size, large_rows = peak_of_import(tmp_path, 4_000)
    assert (small_rows, large_rows) == (1_000, 4_000)
    assert large_size > 3.5 * small_size
    # four times the file, not twice the memory: one line, the calls waiting for a result and
    # the rows waiting for the history's writer (WRITE_AHEAD at most), however long the file
    assert large_peak < 2 * small_peak
    assert large_peak < large_size / 2


def test_a_streamed_capture_reads_like_the_same_lines_in_memory(tmp_path):
    path = synthetic.write(tmp_path, "mcp_jsonl", 40)
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    lines.insert(70, "{not json")  # past the lines detection reads: met while streaming
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.warns(TranscriptWarning, match="1 part"):
        streamed = wb.transcripts.load(path)
    assert path.stat().st_size > 0 and open_source(path).streamed
    with pytest.warns(TranscriptWarning, match="1 part"):
        whole = wb.transcripts.load(("\n".join(lines) + "\n").encode())
    assert len(streamed) == len(whole) == 40
    assert [row["receipt"] for row in streamed.rows()] == [row["receipt"] for row in whole.rows()]
    assert [str(item) for item in streamed.unreadable] == [str(item) for item in whole.unreadable]
    assert str(streamed.unreadable[0]).startswith("line 71: not JSON")
    assert sorted(streamed.tools) == ["read_file"]
