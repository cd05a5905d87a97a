"""artifact_read: getting back the middle that head-and-tail previews left out."""

from __future__ import annotations

from pathlib import Path

import pytest

import workbench as wb
import workbench.builtins


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "root"
    path.mkdir()
    (path / "notes.txt").write_text("not an artifact\n")
    return path


@pytest.fixture
def builtins(tools: wb.Registry, root: Path) -> workbench.builtins.Builtins:
    return wb.builtins.register(tools, root=root)


def invoke(tools: wb.Registry, name: str, args: dict[str, object]) -> wb.Call:
    call = tools.invoke(name, args)
    call.wait(30)
    return call


@pytest.fixture
def artifact(tools, builtins) -> str:
    """The stdout artifact a cut shell_exec receipt names: lines "1".."5000"."""
    call = invoke(tools, "shell_exec", {"command": "seq 1 5000"})
    result = call.envelope.result
    assert result["stdout_truncated"] is True
    path = call.envelope.artifacts[result["stdout_artifact"]].path
    assert f"full stdout (23893 bytes): {path} (read more with artifact_read)" in call.receipt
    return path


def test_a_line_range_of_the_artifact_a_receipt_names(tools, artifact):
    call = invoke(tools, "artifact_read", {"path": artifact, "offset": 2500, "limit": 3})
    assert call.envelope.result == {
        "kind": "file",
        "path": artifact,
        "text": "2500\n2501\n2502\n",
        "start_line": 2500,
        "end_line": 2502,
        "selected_lines": 3,
        "total_lines": 5000,
        "bytes": 23893,
        "truncated": False,
    }
    assert call.receipt == f"{artifact} (lines 2500-2502 of 5000)\n2500\n2501\n2502"


def test_a_byte_range(tools, artifact):
    # "1\n".."9\n" are bytes 0-17, "10\n" starts at byte 18.
    call = invoke(tools, "artifact_read", {"path": artifact, "byte_offset": 18, "byte_limit": 6})
    result = call.envelope.result
    assert result["text"] == "10\n11\n"
    assert (result["start_byte"], result["end_byte"]) == (18, 24)
    assert (result["start_line"], result["end_line"], result["selected_lines"]) == (10, 11, 2)
    assert call.receipt == f"{artifact} (bytes 18-24 of 23893)\n10\n11"


def test_a_long_range_is_bounded_like_any_preview(tools, artifact):
    call = invoke(tools, "artifact_read", {"path": artifact})
    result = call.envelope.result
    assert result["truncated"] is True
    assert result["text"].startswith("1\n2\n3\n") and result["text"].endswith("4999\n5000\n")
    assert result["selected_lines"] == 5000


def test_files_that_are_not_artifacts_are_refused(tools, builtins, root):
    for path in (str(root / "notes.txt"), "/etc/passwd", str(tools.artifacts.root) + "/../x"):
        error = invoke(tools, "artifact_read", {"path": path}).envelope.error
        assert error.kind == "invalid_args" and error.field == "path", path
        assert error.message == (
            "`path` was refused: it is not an artifact written by this workbench."
        )


def test_a_missing_artifact_is_not_found(tools, builtins):
    missing = str(tools.artifacts.root / "call_x" / "stdout.log")
    error = invoke(tools, "artifact_read", {"path": missing}).envelope.error
    assert error.kind == "not_found" and error.retryable is False


def test_line_and_byte_ranges_do_not_mix(tools, artifact):
    args = {"path": artifact, "offset": 2, "byte_limit": 10}
    error = invoke(tools, "artifact_read", args).envelope.error
    assert error.kind == "invalid_args" and error.field == "offset"


def test_ranges_past_the_end_are_refused(tools, artifact):
    error = invoke(tools, "artifact_read", {"path": artifact, "offset": 5001}).envelope.error
    assert error.field == "offset" and "the file has 5000 lines" in error.message
    error = invoke(tools, "artifact_read", {"path": artifact, "byte_offset": 99_999}).envelope.error
    assert error.field == "byte_offset" and "the file has 23893 bytes" in error.message
