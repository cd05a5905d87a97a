"""The file family: a file's text with its line metadata, bounded, rendered under a header."""

from __future__ import annotations

from pathlib import Path

import workbench as wb
from workbench.families import Budgets, Completed, family_of, project, render
from workbench.output._artifacts import ArtifactSink, ArtifactStore


def completed(root: Path, value: object, tool: str = "file_read") -> Completed:
    return Completed(tool, value, ArtifactSink(ArtifactStore(root / "artifacts"), "c1"))


def result(text: str, **fields: object) -> dict[str, object]:
    lines = len(text.splitlines())
    base: dict[str, object] = {
        "kind": "file",
        "path": "src/main.py",
        "text": text,
        "start_line": 1,
        "end_line": lines,
        "selected_lines": lines,
        "total_lines": lines,
        "bytes": len(text.encode()),
        "truncated": False,
    }
    return {**base, **fields}


def test_a_file_renders_as_a_header_and_its_text(tmp_path):
    envelope = project("file", completed(tmp_path, result("import os\n\nprint(os.sep)\n")))
    assert family_of(envelope).name == "file"
    assert render(envelope) == "src/main.py (lines 1-3 of 3)\nimport os\n\nprint(os.sep)"


def test_a_line_range_names_its_place_in_the_file(tmp_path):
    value = result("b\nc\n", start_line=2, end_line=3, selected_lines=2, total_lines=9)
    assert (
        render(project("file", completed(tmp_path, value))) == "src/main.py (lines 2-3 of 9)\nb\nc"
    )


def test_a_byte_range_names_its_bytes(tmp_path):
    value = result("lo wo", start_byte=3, end_byte=8, bytes=11)
    header = render(project("file", completed(tmp_path, value))).splitlines()[0]
    assert header == "src/main.py (bytes 3-8 of 11)"


def test_an_empty_file(tmp_path):
    value = result("", start_line=1, end_line=0, selected_lines=0, total_lines=0)
    assert render(project("file", completed(tmp_path, value))) == "src/main.py (empty file)"


def test_a_text_cut_by_the_reader_says_how_to_read_more(tmp_path):
    text = "a\n[output truncated: showing first 1 and last 1 lines]\nz\n"
    value = result(text, end_line=500, selected_lines=500, total_lines=500, truncated=True)
    envelope = project("file", completed(tmp_path, value))
    assert envelope.result["text"] == text and envelope.artifacts == ()
    assert render(envelope) == (
        "src/main.py (lines 1-500 of 500)\na\n"
        "[output truncated: showing first 1 and last 1 lines]\nz\n"
        "[text cut to fit: read other lines with file_read using offset and limit]"
    )


def test_an_oversized_text_from_a_tool_is_cut_and_kept_as_an_artifact(tmp_path):
    text = "".join(f"row {i}\n" for i in range(100))
    envelope = project(
        "file", completed(tmp_path, wb.file_result("t.txt", text)), Budgets(file_chars=30)
    )
    kept = envelope.result
    assert kept["truncated"] is True
    assert kept["text"].splitlines()[2].startswith("[output truncated: showing first")
    path = envelope.artifacts[kept["text_artifact"]].path
    assert Path(path).read_text() == text
    assert render(envelope, Budgets(file_chars=30)).endswith(
        f"full text ({len(text)} chars): {path} (read more with artifact_read)"
    )


def test_file_projection_is_deterministic(tmp_path):
    value = result("x\n" * 10)
    first = project("file", completed(tmp_path, value))
    second = project("file", completed(tmp_path, value))
    assert (first.canonical(), render(first)) == (second.canonical(), render(second))
