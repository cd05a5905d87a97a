"""The arguments a model sent are kept bounded in the history row: a huge value (a refused
call, here 8 MB of text where a number was wanted) is kept whole in an artifact of the call,
the row holds a bounded preview, reading the history back stays within bounded memory, and a
replay still sends exactly what the model sent."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import workbench as wb
from workbench.runtime import RAW_ARGS_ROW_CHARS

HUGE = 8_000_000

READ_BACK = textwrap.dedent(
    """
    import json, re, sys
    import workbench as wb
    history = wb.History(sys.argv[1])
    rows = history.rows()
    envelopes = history.envelopes()
    history.close()
    # VmHWM: this process's own peak (ru_maxrss would carry its parent's over the exec).
    status = open("/proc/self/status").read()
    peak_kb = int(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1))
    print(json.dumps({"rows": len(rows), "envelopes": len(envelopes), "peak_kb": peak_kb}))
    """
)


def registry_at(directory: Path) -> wb.Registry:
    tools = wb.Registry(history=directory / "history.sqlite", artifacts=directory / "artifacts")

    @tools.tool
    def add(a: int) -> int:
        """Add one."""
        return a + 1

    return tools


def read_back(path: Path) -> dict[str, int]:
    """Read the whole history in a fresh process; what it read and its peak memory."""
    done = subprocess.run(
        [sys.executable, "-c", READ_BACK, str(path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return json.loads(done.stdout)


def test_a_huge_refused_argument_is_kept_whole_beside_a_bounded_row(tmp_path):
    small, huge = tmp_path / "small", tmp_path / "huge"
    for directory, value in ((small, "7"), (huge, "7" * HUGE)):
        tools = registry_at(directory)
        envelope = tools.invoke("add", {"a": [value]}).wait(60)
        assert not envelope.ok  # refused: a list where a number was wanted
        tools.invoke("add", {"a": 1}).wait(60)
        tools.history.close()

    # Reading the history back costs no more than reading one whose call sent 1 character.
    baseline, measured = read_back(small / "history.sqlite"), read_back(huge / "history.sqlite")
    assert measured["rows"] == baseline["rows"] == 2
    grown_kb = measured["peak_kb"] - baseline["peak_kb"]
    assert grown_kb * 1024 < HUGE, f"reading back took {grown_kb} KB more"

    tools = registry_at(huge)
    row = tools.history.rows()[0]
    kept = row["raw_args"]
    assert len(json.dumps(kept)) <= RAW_ARGS_ROW_CHARS
    assert kept["raw_args_chars"] == len(json.dumps({"a": ["7" * HUGE]}))
    whole = Path(kept["raw_args_artifact"]).read_text()
    assert json.loads(whole) == {"a": ["7" * HUGE]}
    assert any("kept whole in" in warning for warning in row["warnings"])
    assert tools.history.rows()[1]["raw_args"] == {"a": 1}  # a small value stays in the row

    # A replay sends exactly what the model sent, read back whole from the artifact.
    replay = tools.replay(row).wait(60)
    assert replay.call.raw_args == {"a": ["7" * HUGE]}
    assert tools.history.get(replay.call.id)["raw_args"]["raw_args_chars"] == len(whole)
    tools.history.close()


ACCEPTED = textwrap.dedent(
    """
    import json, re, sys
    import workbench as wb

    def peak():  # VmHWM: the most resident memory this process has held
        return int(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read())[1]) * 1024

    size, directory = int(sys.argv[1]), sys.argv[2]
    tools = wb.Registry(history=directory + "/history.sqlite")

    @tools.tool
    def measure(text: str, note: str = "") -> int:
        '''How long the text is.'''
        return len(text)

    tools.invoke("measure", {"text": "warm"}).wait(60)
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # the peak counts from here, the interpreter and workbench loaded
    before = peak()
    value = "x" * size
    envelope = tools.invoke("measure", {"text": value, "note": "é"}).wait(300)
    print(json.dumps({"result": envelope.result, "grown": peak() - before}))
    tools.close()
    """
)

ACCEPTED_SIZE = 100_000_000


def test_a_huge_accepted_argument_costs_at_most_three_times_its_size(tmp_path):
    """A 100 MB argument a tool takes: the process's peak memory grows by at most 3x the value
    (the value itself among them; each copy of its JSON cost one more before), the row holds a
    preview of both the arguments as sent and as run, and the whole value is kept once."""
    done = subprocess.run(
        [sys.executable, "-c", ACCEPTED, str(ACCEPTED_SIZE), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    measured = json.loads(done.stdout)
    assert measured["result"] == ACCEPTED_SIZE
    assert measured["grown"] <= 3 * ACCEPTED_SIZE, f"grew {measured['grown'] / ACCEPTED_SIZE:.2f}x"

    history = wb.History(tmp_path / "history.sqlite")
    row = history.rows()[-1]
    history.close()
    assert len(json.dumps(row)) < 4 * RAW_ARGS_ROW_CHARS  # the row is bounded, its events too
    sent, ran = row["raw_args"], row["arguments"]
    assert ran["arguments_artifact"] == sent["raw_args_artifact"]  # the same, kept once
    empty = json.dumps({"text": "", "note": "é"}, ensure_ascii=False)
    assert ran["arguments_chars"] == sent["raw_args_chars"] == ACCEPTED_SIZE + len(empty)
    whole = json.loads(Path(sent["raw_args_artifact"]).read_text(encoding="utf-8"))
    assert whole == {"text": "x" * ACCEPTED_SIZE, "note": "é"}
    assert len(list((tmp_path / "artifacts").rglob("*.json"))) == 1


def test_arguments_the_tool_ran_with_that_differ_from_those_sent_are_kept_whole_too(tmp_path):
    tools = registry_at(tmp_path)
    big = "7" * (RAW_ARGS_ROW_CHARS * 2)

    @tools.tool
    def count(text: str, times: int) -> int:
        """Count."""
        return len(text) * times

    envelope = tools.invoke("count", {"text": big, "times": "2"}).wait(60)  # "2" becomes 2
    assert envelope.result == 2 * len(big)
    row = tools.history.rows()[-1]
    tools.history.close()
    sent, ran = row["raw_args"], row["arguments"]
    assert ran["arguments_artifact"] != sent["raw_args_artifact"]
    assert json.loads(Path(ran["arguments_artifact"]).read_text()) == {"text": big, "times": 2}
    assert json.loads(Path(sent["raw_args_artifact"]).read_text()) == {"text": big, "times": "2"}
    assert ran["arguments_preview"].startswith('{"text": "777')
    started = next(event for event in row["events"] if event["type"] == "tool.started")
    assert started["arguments"] == ran  # the event keeps the preview, not a second copy
    assert any("the arguments the tool ran with" in warning for warning in row["warnings"])


def test_a_row_read_while_the_call_waits_does_not_fix_its_arguments_before_an_edit(tmp_path):
    """The row of a call waiting for approval can be read (a replay of it does); the person
    then edits the huge arguments: the row written at the end keeps the edited ones."""
    from workbench.runtime import record_of

    tools = registry_at(tmp_path)
    first, edited = "1" * (RAW_ARGS_ROW_CHARS * 2), "2" * (RAW_ARGS_ROW_CHARS * 2)

    @tools.tool(permission="always_ask")
    def keep(text: str) -> int:
        """Keep it."""
        return len(text)

    call = tools.invoke("keep", {"text": first})
    deadline = time.monotonic() + 30
    while call.state != "awaiting_approval" and time.monotonic() < deadline:
        time.sleep(0.01)
    early = record_of(call)
    assert early.arguments["arguments_preview"].startswith('{"text": "111')
    call.modify({"text": edited})
    assert call.wait(60).result == len(edited)
    row = tools.history.get(call.id)
    tools.history.close()
    assert row["arguments"]["arguments_preview"].startswith('{"text": "222')
    assert json.loads(Path(row["arguments"]["arguments_artifact"]).read_text()) == {"text": edited}
    assert json.loads(Path(row["raw_args"]["raw_args_artifact"]).read_text()) == {"text": first}
