"""The listing family: seed 000 listings, bounded, rendered as copyable paths."""

from __future__ import annotations

import shutil
from pathlib import Path

import workbench as wb
from workbench.families import Budgets, Completed, family_of, project, render
from workbench.families.listing import CompleteListing
from workbench.output._artifacts import ArtifactSink, ArtifactStore

ENTRIES = [
    {"name": "pkg", "path": "src/pkg", "type": "directory"},
    {"name": "main.py", "path": "src/main.py", "type": "file"},
    {"name": "link", "path": "src/link", "type": "symlink"},
]


def completed(root: Path, value: object) -> Completed:
    return Completed("file_read", value, ArtifactSink(ArtifactStore(root / "artifacts"), "c1"))


def many(count: int) -> list[dict[str, str]]:
    return [{"name": f"f{i:03}", "path": f"d/f{i:03}", "type": "file"} for i in range(count)]


def test_a_listing_renders_one_copyable_path_per_line(tmp_path):
    envelope = project("listing", completed(tmp_path, CompleteListing("src", ENTRIES)))
    assert envelope.result == {
        "kind": "listing",
        "path": "src",
        "entries": ENTRIES,
        "entry_count": 3,
        "truncated": False,
    }
    assert envelope.summary_text == "3 entries in src"
    assert render(envelope) == "3 entries in src\nsrc/pkg/\nsrc/main.py\nsrc/link"
    assert family_of(envelope).name == "listing"


def test_one_entry_and_an_empty_directory(tmp_path):
    one = project("listing", completed(tmp_path, CompleteListing(".", ENTRIES[1:2])))
    assert render(one) == "1 entry in .\nsrc/main.py"
    assert one.summary_text == "1 entry in ."
    empty = project("listing", completed(tmp_path, CompleteListing("empty", [])))
    assert render(empty) == "0 entries in empty"


def test_a_listing_at_the_limit_is_whole(tmp_path):
    envelope = project("listing", completed(tmp_path, CompleteListing("d", many(5), limit=5)))
    assert envelope.result["truncated"] is False and len(envelope.result["entries"]) == 5
    assert envelope.artifacts == ()


def test_a_listing_over_the_limit_is_cut_and_kept_whole_as_an_artifact(tmp_path):
    envelope = project("listing", completed(tmp_path, CompleteListing("d", many(6), limit=5)))
    result = envelope.result
    assert result["truncated"] is True
    assert result["entry_count"] == 6
    assert [entry["name"] for entry in result["entries"]] == [f"f{i:03}" for i in range(5)]
    path = envelope.artifacts[result["entries_artifact"]].path
    assert Path(path).read_text() == "".join(f"d/f{i:03}\n" for i in range(6))
    assert render(envelope) == (
        "6 entries in d (showing the first 5)\nd/f000\nd/f001\nd/f002\nd/f003\nd/f004\n"
        f"full listing (6 entries): {path} (read more with artifact_read)"
    )


def test_the_policy_limit_applies_when_the_tool_gives_none(tmp_path):
    envelope = project(
        "listing", completed(tmp_path, CompleteListing("d", many(4))), Budgets(listing_limit=3)
    )
    assert envelope.result["truncated"] is True and len(envelope.result["entries"]) == 3


def test_a_wb_listing_from_any_tool_is_a_listing(tmp_path):
    value = wb.listing("d", many(2), truncated=True, entry_count=10)
    envelope = project("json", completed(tmp_path, value))
    assert family_of(envelope).name == "listing"
    assert render(envelope) == (
        "10 entries in d (showing the first 2)\nd/f000\nd/f001\n[listing truncated: 8 more entries]"
    )


def test_listing_projection_is_deterministic(tmp_path):
    outcomes = []
    for _ in range(2):
        shutil.rmtree(tmp_path / "artifacts", ignore_errors=True)
        envelope = project("listing", completed(tmp_path, CompleteListing("d", many(9), limit=4)))
        outcomes.append((envelope.canonical(), render(envelope)))
    assert outcomes[0] == outcomes[1]
