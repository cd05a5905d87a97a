"""The run loop itself: step mode and an edited receipt, Stop terminating a running call,
compaction of older receipts before a request, ``await run``, and compare_runs. Driven through
the OpenAI SDK against the scripted server, with replies built here for each case."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest

import workbench as wb
from tests.conftest import wait_until
from tests.models.support import add_note_tools
from workbench.models.local_server import ScriptedServer


def chat(reply_id: str, content: str | None, *calls: tuple[str, str, str]) -> dict:
    """A Chat Completions reply asking for ``calls`` (id, name, JSON arguments)."""
    message: dict = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for i, n, a in calls
        ]
    return {
        "json": {
            "id": reply_id,
            "object": "chat.completion",
            "created": 1761900000,
            "model": "gpt-4.1-2025-04-14",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": "tool_calls" if calls else "stop",
                }
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
        }
    }


@pytest.fixture
def server():
    started = ScriptedServer().start()
    yield started
    started.stop()


def sent_tool_contents(server: ScriptedServer, request: int) -> list[str]:
    body = server.requests[request].body
    return [m["content"] for m in body["messages"] if m.get("role") == "tool"]


def test_step_mode_pauses_and_sends_an_edited_receipt(tools, server):
    add_note_tools(tools)
    server.add(
        "openai_chat",
        chat("c1", None, ("call_1", "read_note", '{"name": "budget.txt"}')),
        chat("c2", "ok"),
    )
    run = wb.run("openai:m", tools, "budget?", base_url=server.openai_base_url, step=True)
    run.wait(timeout=10)
    assert run.state == "paused" and server.requests == []  # nothing sent before step()
    run.step()
    run.wait(timeout=30)
    assert run.state == "paused" and len(server.requests) == 1
    (call,) = run.calls
    assert [result.text for result in run.pending] == [call.receipt]
    run.edit_receipt(call, "budget: 999 (edited)")
    run.step()
    run.wait(timeout=30)
    assert run.end_reason == "answered", run.error
    assert sent_tool_contents(server, 1) == ["budget: 999 (edited)"]
    assert call.receipt == "budget: 1200\n"  # the call's own receipt is unchanged
    assert [(e.before, e.after) for e in run.edits] == [(call.receipt, "budget: 999 (edited)")]
    assert run.results[0].edited
    assert wait_until(
        lambda: any("receipt edited" in w for w in run.history.iloc[0]["warnings"]), timeout=5
    )
    with pytest.raises(ValueError, match="already sent"):
        run.edit_receipt(call, "too late")
    assert wb.transcripts.load(run.transcript).rows()[0]["receipt"] == "budget: 999 (edited)"


def test_stop_terminates_a_running_call_and_sends_nothing_more(tools, server):
    release = threading.Event()
    add_note_tools(tools, release=release)
    server.add(
        "openai_chat",
        chat("c1", None, ("call_slow", "slow_count", '{"name": "recipes.txt"}')),
        chat("c2", "never asked for"),
    )
    run = wb.run("openai:m", tools, "count", base_url=server.openai_base_url)
    assert wait_until(lambda: run.calls and run.calls[0].state == "running", timeout=20)
    run.stop()
    run.wait(timeout=30)
    assert run.state == "stopped" and run.end_reason == "stopped"
    assert run.calls[0].state == "terminated"
    assert len(server.requests) == 1 and server.left("openai_chat") == 1
    # the transcript still answers the call, with the receipt of the terminated call
    assert run.transcript["messages"][-1]["content"] == run.calls[0].receipt


def test_compaction_shortens_older_receipts_before_they_are_sent_again(tools, server):
    @tools.tool(read_only=True)
    def list_dir(path: str):  # an envelope, so no return annotation (no output schema)
        """List a directory.

        Args:
            path: The directory.
        """
        return wb.listing(path, [{"name": f"file_{i:03}.txt", "type": "file"} for i in range(60)])

    server.add(
        "openai_chat",
        chat("c1", None, ("call_a", "list_dir", '{"path": "a"}')),
        chat("c2", None, ("call_b", "list_dir", '{"path": "b"}')),
        chat("c3", None, ("call_c", "list_dir", '{"path": "c"}')),
        chat("c4", "done"),
    )
    run = wb.run(
        "openai:m", tools, "list", base_url=server.openai_base_url, compact_budget=1500
    ).wait(timeout=30)
    assert run.end_reason == "answered", run.error
    first = run.calls[0]
    assert sent_tool_contents(server, 1) == [first.receipt]  # sent whole the first time
    expected = wb.compact(run.calls[:3], 1500, keep_recent=1)
    last = sent_tool_contents(server, 3)
    assert last[2] == run.calls[2].receipt  # the newest is never compacted
    assert last[0] == expected.receipts[0] != first.receipt
    assert len(last[0]) < len(first.receipt)
    assert run.compactions and run.compactions[0].cut[0][:2] == (first.id, first.receipt)
    assert run.results[0].compacted == last[0]


def test_await_a_run(tools, server):
    add_note_tools(tools)
    server.add(
        "openai_chat",
        chat("c1", None, ("call_1", "search_notes", '{"query": "travel"}')),
        chat("c2", "found it"),
    )

    async def main() -> wb.Run:
        return await wb.run("openai:m", tools, "travel?", base_url=server.openai_base_url)

    run = asyncio.run(main())
    assert run.done and run.turns[-1].text == "found it"
    assert json.loads(run.calls[0].receipt) == ["travel.txt"]


def test_max_turns_ends_the_run_with_every_call_answered(tools, server):
    add_note_tools(tools)
    server.add(
        "openai_chat",
        chat("c1", None, ("call_1", "search_notes", '{"query": "a"}')),
        chat("c2", None, ("call_2", "search_notes", '{"query": "b"}')),
    )
    run = wb.run("openai:m", tools, "x", base_url=server.openai_base_url, max_turns=2)
    run.wait(timeout=30)
    assert run.end_reason == "max_turns" and run.state == "finished"
    assert len(wb.transcripts.load(run.transcript).rows()) == 2


def versions() -> dict[str, wb.Registry]:
    """Two versions of one tool: the first names its argument ``max``, which models get wrong
    (they send ``limit``); the second calls it ``limit``."""
    before = wb.Registry(history=":memory:")
    after = wb.Registry(history=":memory:")

    @before.tool(name="search_notes")
    def search_v1(query: str, max: int = 5) -> list[str]:
        """Search.

        Args:
            query: Word.
            max: Most results.
        """
        return [query][:max]

    @after.tool(name="search_notes")
    def search_v2(query: str, limit: int = 5) -> list[str]:
        """Search.

        Args:
            query: Word.
            limit: Most results.
        """
        return [query][:limit]

    return {"max": before, "limit": after}


def test_compare_runs_puts_two_versions_side_by_side(server):
    for _ in range(2):  # the same scripted model for both versions
        server.add(
            "openai_chat",
            chat("c1", None, ("call_1", "search_notes", '{"query": "tea", "limit": "2"}')),
            chat("c2", "done"),
        )
    table = wb.compare_runs(
        "openai:m", versions(), ["find tea"], base_url=server.openai_base_url
    ).to_dataframe()
    assert table.loc["calls"].tolist() == [1, 1]
    assert table.loc["refused by preflight"].tolist() == [1, 0]
    assert table.loc["coerced"].tolist() == [0, 1]  # "2" → 2 once the name is right
    assert table.loc["failed: invalid_args"].tolist() == [1, 0]
    assert table.loc["turns"].tolist() == [2, 2]
    assert table.loc["input tokens"].tolist() == [200, 200]
