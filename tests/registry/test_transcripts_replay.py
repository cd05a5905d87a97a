"""``tools.replay``: a recorded call run again with the tools registered now, recorded as a new
call linked to the original, receipts and canonical records diffed."""

from __future__ import annotations

from pathlib import Path

import pytest

import workbench as wb
from workbench.registry._replay import REPLAYED

DATA = Path(__file__).parents[1] / "data" / "transcripts"


@pytest.fixture
def shell(tools, tmp_path):
    wb.builtins.register(tools, root=tmp_path)
    return tools


def replayed_event(row: dict) -> dict:
    [event] = [event for event in row["events"] if event.get("type") == REPLAYED]
    return event


def test_replay_of_shell_exec_is_a_new_call_linked_to_the_original(shell):
    original = shell.invoke("shell_exec", {"command": "printf 'Grüße\\n'"})
    original.wait(timeout=30)
    replay = shell.replay(original.id).wait(timeout=30)
    assert replay.call.id != original.id
    assert replay.call.receipt == original.receipt
    assert replay.receipts().same
    row = replay.row
    assert row is not None
    assert row["parent_call_id"] == original.id
    assert replayed_event(row) == {
        "type": REPLAYED,
        "at": replayed_event(row)["at"],
        "replay_of": original.id,
        "replay_of_model_call_id": None,
        "args_edited": False,
    }
    assert row["raw_args"] == {"command": "printf 'Grüße\\n'"}
    # both calls are in the history; the original is untouched
    assert len(shell.history) == 2
    assert shell.history.get(original.id)["parent_call_id"] is None


def test_replay_with_edited_arguments_shows_the_difference(shell):
    original = shell.invoke("shell_exec", {"command": "echo eins"})
    original.wait(timeout=30)
    replay = shell.replay(original.id, {"command": "echo zwei"}).wait(timeout=30)
    assert replay.edited
    diff = replay.receipts()
    assert ("removed", "eins") in diff.segments and ("added", "zwei") in diff.segments
    assert replayed_event(replay.row)["args_edited"] is True
    assert replay.row["arguments"] == {"command": "echo zwei"}
    canonical = replay.canonical()
    assert not canonical.same and ("added", "zwei") in canonical.segments
    html = replay.to_html()
    assert "wb-receipt-diff" in html and "zwei" in html


def test_replay_links_even_when_nobody_waits(shell):
    original = shell.invoke("shell_exec", {"command": "true"})
    original.wait(timeout=30)
    replay = shell.replay(original.id)
    replay.call.wait(timeout=30)
    assert replay._linked.wait(timeout=30)
    assert shell.history.get(replay.call.id)["parent_call_id"] == original.id


def test_many_replays_start_no_thread_and_each_row_carries_its_link_when_it_ends(tools):
    import threading

    @tools.tool
    def double(x: int) -> int:
        """Double."""
        return 2 * x

    originals = [tools.invoke("double", {"x": i}) for i in range(30)]
    for call in originals:
        call.wait(10)
    threads_before = threading.active_count()
    replays = [tools.replay(call.id) for call in originals]
    assert not [t for t in threading.enumerate() if t.name == "workbench-replay"]
    assert threading.active_count() <= threads_before + 2  # a worker or two, not 30 threads
    for original, replay in zip(originals, replays, strict=True):
        replay.call.wait()
        # committed with the call itself: linked the moment the call is seen to end
        row = tools.history.get(replay.call.id)
        assert row["parent_call_id"] == original.id and replayed_event(row)["replay_of"]
        assert row["arguments"] == {"x": original.arguments["x"]} and replay.link_problem is None


def test_replay_of_an_imported_call_runs_what_the_model_sent(shell, tmp_path):
    transcript = wb.transcripts.load(DATA / "openai_chat.json")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "config.json").write_text('{"target": "app"}', encoding="utf-8")

    @shell.tool(replace=True)
    def read_file(path: str, limit: int = 100) -> str:
        """Read a text file under the test's root."""
        return (tmp_path / path).read_text(encoding="utf-8")

    # by the model's call id, looked up in the imported history
    replay = shell.replay("call_6Rf", history=transcript).wait(timeout=30)
    assert replay.args == '{"path": "build/config.json"}'  # the raw string the model sent
    assert replay.call.envelope.ok
    assert replay.call.envelope.result == '{"target": "app"}'
    row = replay.row
    assert row["parent_call_id"] == "chatcmpl-AZ9kq3Lr7bXw2:5"
    assert replayed_event(row)["replay_of_model_call_id"] == "call_6Rf"
    diff = replay.receipts()
    assert diff.left == transcript.get("call_6Rf")["receipt"]
    assert not diff.same


def test_replay_of_a_malformed_call_with_fixed_arguments(shell, tmp_path):
    transcript = wb.transcripts.load(DATA / "openai_chat.json")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.c").write_text("int main(void) { return 0; }\n", encoding="utf-8")

    @shell.tool(replace=True)
    def read_file(path: str, limit: int = 100) -> str:
        """Read a text file under the test's root."""
        return (tmp_path / path).read_text(encoding="utf-8")

    row = transcript.get("call_3cH")
    as_sent = shell.replay(row).wait(timeout=30)
    assert as_sent.call.envelope.error.kind.value == "invalid_args"
    fixed = shell.replay(row, {"path": "src/main.c", "limit": 50}).wait(timeout=30)
    assert fixed.call.envelope.ok
    assert fixed.call.receipt == "int main(void) { return 0; }\n"
    assert fixed.receipts().left.startswith("[REJECTED]")


def test_replay_of_a_tool_no_longer_registered_is_recorded_as_not_found(tools):
    transcript = wb.transcripts.load(DATA / "anthropic.json")
    replay = tools.replay("toolu_01", history=transcript).wait(timeout=30)
    assert replay.call.envelope.error.kind.value == "tool_not_found"
    assert replay.row["parent_call_id"] == transcript.get("toolu_01")["call_id"]


def test_replay_of_an_unknown_id_or_object(tools):
    with pytest.raises(KeyError, match="no recorded call 'nope'"):
        tools.replay("nope")
    with pytest.raises(TypeError, match="not a int"):
        tools.replay(3)


def test_a_tool_returning_the_same_text_shows_no_canonical_difference(tools):
    transcript = wb.transcripts.load(
        [
            {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {
                "name": "greet", "arguments": '{"name": "Ada"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "Hallo, Ada! ✓\n"},
        ]
    )  # fmt: skip

    @tools.tool
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hallo, {name}! ✓\n"

    replay = tools.replay("c1", history=transcript).wait(timeout=30)
    assert replay.receipts().same
    assert replay.canonical().same, replay.canonical().unified()
    # a different text is still a difference, in the same form on both sides
    changed = tools.replay("c1", {"name": "Bob"}, history=transcript).wait(timeout=30)
    diff = changed.canonical()
    assert not diff.same and ("added", "Bob") in diff.segments
    assert '"text": "Hallo, Bob! ✓\\n"' in diff.right
