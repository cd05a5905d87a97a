"""inspect_ai eval logs, written by inspect_ai itself (offline, its mock model), import exactly.

The logs are generated once per module by ``tests/data/transcripts/make_inspect_logs.py`` in a
subprocess, and checked against what inspect_ai's own log reader says the model was sent.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# Imported while the module is collected, before any test has started a thread: on Python
# 3.11, building inspect_ai's pydantic models parses source with ``ast`` (for field
# docstrings), and CPython's AST constructor keeps one recursion counter for all threads
# (python/cpython#106905), so a thread compiling an import at the same moment can fail it
# with "AST constructor recursion depth mismatch" (a fresh clone, with nothing compiled yet,
# met it once).
import workbench as wb

SCRIPT = Path(__file__).parents[1] / "data" / "transcripts" / "make_inspect_logs.py"
CALL_IDS = ["call_add", "call_note", "call_missing", "call_long", "call_broken"]


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[str, Path]:
    """The ``.eval`` and ``.json`` logs of one scripted run."""
    log_dir = tmp_path_factory.mktemp("inspect-logs")
    env = {**os.environ, "INSPECT_LOG_DIR": str(log_dir), "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(log_dir)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = {path.suffix: path for path in log_dir.iterdir()}
    assert set(found) == {".eval", ".json"}
    return found


def sent_to_model(path: Path) -> dict[str, tuple[str, bool]]:
    """Tool call id → (the text inspect_ai sends an OpenAI-compatible model, is it an error),
    read with inspect_ai's own reader."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(path))
    sent = {}
    for message in log.samples[0].messages:
        if message.role == "tool":
            if message.error is not None:
                sent[message.tool_call_id] = (f"Error: {message.error.message}", True)
            else:
                sent[message.tool_call_id] = (message.text, False)
    return sent


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_inspect_log_imports_every_call_with_its_receipt(logs, suffix):
    path = logs[suffix]
    assert wb.transcripts.detect_format(path) == "inspect_ai"
    history = wb.transcripts.load(path)
    assert history.unreadable == []
    frame = history.to_dataframe()
    assert list(frame["model_call_id"]) == CALL_IDS
    assert list(frame["tool"]) == ["add", "read_note", "read_note", "read_note", "add"]
    assert list(frame["status"]) == ["success", "success", "error", "success", "error"]
    assert list(frame["rule"]) == [
        "plain_text",
        "plain_text",
        "flagged_error",
        "plain_text",
        "flagged_error",
    ]
    assert list(frame["preflight"]) == ["accepted", "accepted", "accepted", "accepted", "rejected"]
    # the long output was cut by inspect_ai itself, and the row says so
    assert list(frame["truncated"]) == [False, False, False, True, False]
    # parallel calls share the assistant message's id; every call is timed by its tool event
    assert frame["message_id"].iloc[0] == frame["message_id"].iloc[1]
    assert frame["elapsed_ms"].notna().all()
    assert len(set(frame["run_id"])) == 1 and frame["run_id"].iloc[0].endswith("/1/1")
    sent = sent_to_model(path)
    rows = {row["model_call_id"]: row for row in history.rows()}
    assert set(sent) == set(CALL_IDS)
    for call_id, (text, is_error) in sent.items():
        assert rows[call_id]["receipt"] == text
        assert (rows[call_id]["status"] == "error") is is_error
    assert rows["call_note"]["receipt"] == "Einkaufsliste: Äpfel, Brötchen, 牛乳"
    assert rows["call_broken"]["arguments"] == {}
    assert any("Expecting ','" in warning for warning in rows["call_broken"]["warnings"])
    assert sorted(history.tools) == ["add", "read_note"]
    assert history.tools["add"]["required"] == ["x", "y"]


def test_both_log_files_of_one_run_give_the_same_receipts(logs):
    first = wb.transcripts.load(logs[".eval"]).rows()
    second = wb.transcripts.load(logs[".json"]).rows()
    assert [row["receipt"] for row in first] == [row["receipt"] for row in second]


def test_a_damaged_eval_archive_is_a_clear_error(logs, tmp_path):
    damaged = tmp_path / "run.eval"
    damaged.write_bytes(logs[".eval"].read_bytes()[:200])
    with pytest.raises(wb.transcripts.TranscriptError) as caught:
        wb.transcripts.load(damaged)
    assert str(caught.value).startswith("run.eval: the archive: not a readable zip")


def test_an_eval_log_object_from_inspect_ai_imports_like_its_file(logs):
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(logs[".json"]))
    from_object = wb.transcripts.load(log)
    assert from_object.format == "inspect_ai"
    assert [row["receipt"] for row in from_object.rows()] == [
        row["receipt"] for row in wb.transcripts.load(logs[".json"]).rows()
    ]


ZSTD_READ = """
import sys, zipfile
import workbench as wb
path = sys.argv[1]
assert {info.compress_type for info in zipfile.ZipFile(path).infolist()} == {93}  # zstd
history = wb.transcripts.load(path)
print(len(history), "inspect_ai" in sys.modules)
"""


def test_a_zstd_eval_log_is_read_in_a_fresh_process_without_inspect_ai(logs):
    # inspect_ai writes .eval members with zstd (compress type 93); in this test process it
    # has patched zipfile already, so only a fresh interpreter shows workbench reads them alone
    done = subprocess.run(
        [sys.executable, "-c", ZSTD_READ, str(logs[".eval"])],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [str(len(CALL_IDS)), "False"]


ZSTD_MISSING = """
import sys
sys.modules["zipfile_zstd"] = None  # as if the 'transcripts' extra were not installed
import workbench as wb
try:
    wb.transcripts.load(sys.argv[1])
except wb.transcripts.TranscriptError as exc:
    print(exc)
"""


def test_without_the_transcripts_extra_a_zstd_log_names_the_extra(logs):
    done = subprocess.run(
        [sys.executable, "-c", ZSTD_MISSING, str(logs[".eval"])],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    message = done.stdout.strip()
    assert message.startswith(f"{logs['.eval'].name}: ")
    assert "compressed with zstd" in message
    assert message.endswith(
        "expected the 'transcripts' extra installed (pip install 'tool-workbench[transcripts]')"
    )
