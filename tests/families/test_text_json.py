"""The text and json families: verbatim text, compact JSON, both bounded by an artifact."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import workbench as wb
from workbench.families import Budgets, Completed, family_of, project, render
from workbench.output._artifacts import ArtifactSink, ArtifactStore

TINY = Budgets(text_chars=30, json_chars=30)


def completed(root: Path, value: object, tool: str = "t") -> Completed:
    return Completed(tool, value, ArtifactSink(ArtifactStore(root / "artifacts"), "c1"))


def test_text_is_rendered_verbatim(tmp_path):
    envelope = project("text", completed(tmp_path, "Found 2 matches\n- a.py\n- b.py"))
    assert envelope.result == {"text": "Found 2 matches\n- a.py\n- b.py"}
    assert family_of(envelope).name == "text"
    assert render(envelope) == "Found 2 matches\n- a.py\n- b.py"


def test_wb_success_text_is_text_whatever_the_tool_family(tmp_path):
    envelope = project("json", completed(tmp_path, wb.success(text="hello")))
    assert family_of(envelope).name == "text"
    assert render(envelope) == "hello"


def test_long_text_is_cut_and_kept_whole(tmp_path):
    text = "".join(f"{i}\n" for i in range(100))
    envelope = project("text", completed(tmp_path, text), TINY)
    result = envelope.result
    assert result["truncated"] is True and result["chars"] == len(text)
    assert family_of(envelope).name == "text"
    path = envelope.artifacts[result["text_artifact"]].path
    assert Path(path).read_text() == text
    assert render(envelope, TINY) == (
        "0\n1\n2\n3\n4\n5\n6\n"
        "[output truncated: showing first 7 and last 5 lines]\n"
        "95\n96\n97\n98\n99\n"
        f"full text (290 chars): {path} (read more with artifact_read)"
    )


def test_json_is_compact_and_readable(tmp_path):
    envelope = project("json", completed(tmp_path, {"b": [1, 2], "a": "é"}))
    assert family_of(envelope).name == "json"
    assert render(envelope) == '{"b": [1, 2], "a": "é"}'


def test_json_scalars_and_strings(tmp_path):
    assert render(project("json", completed(tmp_path, 42))) == "42"
    assert render(project("json", completed(tmp_path, None))) == "null"
    assert render(project("json", completed(tmp_path, "plain words"))) == "plain words"


def test_a_large_json_result_becomes_a_bounded_preview_and_an_artifact(tmp_path):
    value = {"rows": list(range(20))}
    envelope = project("json", completed(tmp_path, value, tool="rows"), TINY)
    result = envelope.result
    assert set(result) == {"kind", "preview", "truncated", "chars", "result_artifact"}
    assert result["kind"] == "json" and result["truncated"] is True
    assert result["chars"] == len(json.dumps(value))
    assert envelope.summary_text == "rows returned an object with 1 key"
    assert family_of(envelope).name == "json"
    path = envelope.artifacts[result["result_artifact"]].path
    assert json.loads(Path(path).read_text()) == value
    receipt = render(envelope, TINY)
    assert receipt.startswith('{\n  "rows": [\n')
    assert "[output truncated: showing first" in receipt
    assert receipt.endswith(
        f"full result JSON ({result['chars']} chars): {path} (read more with artifact_read)"
    )


def test_warnings_are_listed_last(tmp_path):
    envelope = project("json", completed(tmp_path, wb.success(result=1, warnings=["slow disk"])))
    assert render(envelope) == "1\nwarning: slow disk"


def test_text_and_json_projection_is_deterministic(tmp_path):
    for family, value in (("text", "x\n" * 50), ("json", {"k": "v" * 100})):
        outcomes = []
        for _ in range(2):
            shutil.rmtree(tmp_path / "artifacts", ignore_errors=True)
            envelope = project(family, completed(tmp_path, value), TINY)
            outcomes.append((envelope.canonical(), render(envelope, TINY)))
        assert outcomes[0] == outcomes[1]
