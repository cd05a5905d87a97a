"""file_read on a real temporary tree: listings, files, and every refusal of a path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import workbench as wb
import workbench.builtins


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "root"
    (path / "src" / "pkg").mkdir(parents=True)
    (path / "src" / "main.py").write_text("import os\n\nprint(os.sep)\n")
    (path / "src" / "pkg" / "mod.py").write_text("X = 1\n")
    (path / "src" / ".hidden").write_text("")
    (path / "docs").mkdir()
    (path / "README.md").write_text("# Demo\n")
    (tmp_path / "secret.txt").write_text("outside\n")
    return path


@pytest.fixture
def builtins(tools: wb.Registry, root: Path) -> workbench.builtins.Builtins:
    return wb.builtins.register(tools, root=root, listing_limit=5)


def read(tools: wb.Registry, **args: object) -> wb.Call:
    call = tools.invoke("file_read", args)
    call.wait(30)
    return call


def refusal(tools: wb.Registry, path: str) -> wb.ToolError:
    envelope = read(tools, path=path).envelope
    assert envelope.error is not None, envelope
    return envelope.error


def test_a_directory_lists_directories_first_then_names(tools, builtins):
    call = read(tools, path="src")
    assert call.envelope.result == {
        "kind": "listing",
        "path": "src",
        "entries": [
            {"name": "pkg", "path": "src/pkg", "type": "directory"},
            {"name": ".hidden", "path": "src/.hidden", "type": "file"},
            {"name": "main.py", "path": "src/main.py", "type": "file"},
        ],
        "entry_count": 3,
        "truncated": False,
    }
    assert call.receipt == "3 entries in src\nsrc/pkg/\nsrc/.hidden\nsrc/main.py"


def test_descending_is_a_field_copy(tools, builtins):
    top = read(tools, path=".").envelope.result
    src = next(entry for entry in top["entries"] if entry["name"] == "src")
    assert src["path"] == "src"
    pkg = next(
        e for e in read(tools, path=src["path"]).envelope.result["entries"] if e["name"] == "pkg"
    )
    mod = read(tools, path=pkg["path"]).envelope.result["entries"][0]
    assert read(tools, path=mod["path"]).envelope.result["text"] == "X = 1\n"


def test_the_root_lists_as_dot(tools, builtins):
    assert read(tools, path=".").receipt == "3 entries in .\ndocs/\nsrc/\nREADME.md"


def test_a_listing_at_the_limit_is_whole(tools, builtins, root):
    for i in range(5):
        (root / "docs" / f"{i}.md").write_text("")
    result = read(tools, path="docs").envelope.result
    assert result["truncated"] is False and result["entry_count"] == 5
    assert len(result["entries"]) == 5


def test_a_listing_over_the_limit_is_cut_and_the_rest_kept(tools, builtins, root):
    for i in range(7):
        (root / "docs" / f"{i}.md").write_text("")
    call = read(tools, path="docs")
    result = call.envelope.result
    assert result["truncated"] is True and result["entry_count"] == 7
    assert [entry["name"] for entry in result["entries"]] == [f"{i}.md" for i in range(5)]
    artifact = call.envelope.artifacts[result["entries_artifact"]].path
    assert call.receipt == (
        "7 entries in docs (showing the first 5)\n"
        "docs/0.md\ndocs/1.md\ndocs/2.md\ndocs/3.md\ndocs/4.md\n"
        f"full listing (7 entries): {artifact} (read more with artifact_read)"
    )
    rest = tools.invoke("artifact_read", {"path": artifact, "offset": 6})
    rest.wait(10)
    assert rest.envelope.result["text"] == "docs/5.md\ndocs/6.md\n"


def test_a_file_gives_its_text_and_line_metadata(tools, builtins):
    call = read(tools, path="src/main.py")
    assert call.envelope.result == {
        "kind": "file",
        "path": "src/main.py",
        "text": "import os\n\nprint(os.sep)\n",
        "start_line": 1,
        "end_line": 3,
        "selected_lines": 3,
        "total_lines": 3,
        "bytes": 25,
        "truncated": False,
    }
    assert call.receipt == "src/main.py (lines 1-3 of 3)\nimport os\n\nprint(os.sep)"


def test_offset_and_limit_select_lines(tools, builtins, root):
    (root / "n.txt").write_text("".join(f"{i}\n" for i in range(1, 11)))
    call = read(tools, path="n.txt", offset=4, limit=3)
    assert call.envelope.result["text"] == "4\n5\n6\n"
    assert call.receipt == "n.txt (lines 4-6 of 10)\n4\n5\n6"
    tail = read(tools, path="n.txt", offset=9, limit=50).envelope.result
    assert (tail["text"], tail["end_line"], tail["selected_lines"]) == ("9\n10\n", 10, 2)
    past = read(tools, path="n.txt", offset=11).envelope.error
    assert past.kind == "invalid_args" and past.field == "offset"
    assert past.message == "`offset` 11 is past the end: the file has 10 lines."


def test_an_empty_file_and_a_last_line_without_newline(tools, builtins, root):
    (root / "empty.txt").write_text("")
    assert read(tools, path="empty.txt").receipt == "empty.txt (empty file)"
    (root / "open.txt").write_text("a\nb")
    result = read(tools, path="open.txt").envelope.result
    assert (result["total_lines"], result["text"]) == (2, "a\nb")


def test_a_large_file_is_bounded_head_and_tail(tools, builtins, root):
    lines = 400_000
    (root / "big.log").write_text("".join(f"entry {i:06}\n" for i in range(lines)))
    call = read(tools, path="big.log")
    result = call.envelope.result
    assert result["truncated"] is True and result["total_lines"] == lines
    assert result["end_line"] == lines and result["bytes"] == lines * 13
    assert len(result["text"]) <= tools.budgets.file_chars + 100
    assert result["text"].startswith("entry 000000\nentry 000001\n")
    assert result["text"].endswith("entry 399999\n")
    assert "[output truncated: showing first" in result["text"]
    assert call.receipt.endswith(
        "[text cut to fit: read other lines with file_read using offset and limit]"
    )


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"\x7fELF\x02\x01\x00\x00binary", "it contains a NUL byte at offset 6"),
        (b"caf\xe9 latin-1", "it is not UTF-8 text (byte 0xe9 at offset 3)"),
    ],
)
def test_binary_files_are_refused(tools, builtins, root, content, reason):
    (root / "blob.bin").write_bytes(content)
    error = refusal(tools, "blob.bin")
    assert error.kind == "invalid_args" and error.field == "path"
    assert error.message == (
        f"`blob.bin` is a binary file ({reason}); file_read reads UTF-8 text only."
    )
    assert error.recovery_hint == "inspect it with shell_exec instead, e.g. `file blob.bin`"


def test_a_missing_path_is_not_found_and_suggests_a_listing(tools, builtins):
    error = refusal(tools, "src/nope.py")
    assert error.kind == "not_found" and error.retryable is False
    assert error.message == (
        "`src/nope.py` does not exist; list `src` with file_read to see what does."
    )
    deep = refusal(tools, "src/gone/deeper/x.py")
    assert deep.message.endswith("list `src` with file_read to see what does.")
    call = read(tools, path="nope")
    assert call.receipt == (
        "Error (not_found): `nope` does not exist; list `.` with file_read to see what does.\n"
        "field: path\n"
        'hint: call file_read with path "." and pick a path from the listing\n'
        "do not retry unchanged"
    )


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("../secret.txt", "path traversal: `../secret.txt` climbs out of the root with `..`"),
        ("src/../../secret.txt", "path traversal: `src/../../secret.txt` climbs out"),
        ("..", "path traversal: `..` climbs out of the root"),
        ("", "it is empty"),
        ("   ", "it is empty"),
        ("src/ma\x00in.py", "it contains the character U+0000 (a control character) at position 6"),
        ("src\nmain.py", "the character U+000A (a control character) at position 3"),
        ("src/\u202emain.py", "U+202E (RIGHT-TO-LEFT OVERRIDE) at position 4"),
        ("src/\u200bmain.py", "U+200B (ZERO WIDTH SPACE)"),
        ("src\\main.py", "it contains `\\`"),
        ("~/notes.txt", "`~` (a home directory) is not expanded"),
    ],
)
def test_escapes_and_odd_characters_are_refused_on_the_path_field(tools, builtins, path, reason):
    error = refusal(tools, path)
    assert error.kind == "invalid_args" and error.field == "path"
    assert error.message.startswith("`path` was refused: ")
    assert reason in error.message


def test_absolute_paths_outside_the_root_are_refused_and_inside_are_read(tools, builtins, root):
    error = refusal(tools, str(root.parent / "secret.txt"))
    assert error.kind == "invalid_args" and error.field == "path"
    assert "is outside the root" in error.message
    assert refusal(tools, "/etc/passwd").kind == "invalid_args"
    inside = read(tools, path=str(root / "README.md")).envelope.result
    assert inside["path"] == "README.md" and inside["text"] == "# Demo\n"


def test_symlinks_pointing_out_are_refused(tools, builtins, root):
    os.symlink(root.parent / "secret.txt", root / "leak.txt")
    os.symlink(root.parent, root / "up")
    os.symlink("/nonexistent-target", root / "dangling-out")
    for path, link in (("leak.txt", "leak.txt"), ("up/secret.txt", "up"), ("up", "up")):
        error = refusal(tools, path)
        assert error.kind == "invalid_args" and error.field == "path", path
        assert error.message == (
            f"`path` was refused: `{link}` is a symbolic link that points outside the root."
        )
    assert refusal(tools, "dangling-out").kind == "invalid_args"


def test_symlinks_inside_the_root_are_followed_and_listed_as_symlinks(tools, builtins, root):
    os.symlink("src/main.py", root / "alias.py")
    os.symlink(root / "src", root / "code")
    assert read(tools, path="alias.py").envelope.result["text"].startswith("import os")
    assert read(tools, path="code/pkg/mod.py").envelope.result["path"] == "code/pkg/mod.py"
    entries = read(tools, path=".").envelope.result["entries"]
    assert {"name": "alias.py", "path": "alias.py", "type": "symlink"} in entries


def test_a_named_pipe_is_refused_without_blocking(tools, builtins, root):
    os.mkfifo(root / "pipe")
    error = refusal(tools, "pipe")
    assert error.kind == "invalid_args"
    assert error.message == (
        "`path` was refused: `pipe` is a named pipe; file_read reads regular files and directories."
    )
