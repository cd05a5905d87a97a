"""workbench connected to its own served registry gets the envelopes it gets calling directly.

The same demo registry (same workspace) is called twice: directly, and through MCP (in process,
over stdio, over streamable HTTP). Canonical records and receipts must be identical except for
what differs by nature: call ids, durations, and where artifacts were written.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import workbench as wb
from tests.mcp.test_server import DEMO, HttpServerProcess, demo_env, served_root, wait_until
from workbench import mcp as wbmcp
from workbench.mcp import demo

__all__ = ["served_root"]  # a fixture, shared with test_mcp_server

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("greet", {"name": "Ada", "excited": "true"}),
    ("greet", {"name": "Ada", "mood": "happy"}),
    ("word_stats", {"text": "one two\nthree"}),
    ("divide", {"a": "7", "b": 2}),
    ("divide", {"a": 1, "b": 0}),
    ("lookup", {"key": "ada"}),
    ("lookup", {"key": "bob"}),
    ("count", {"n": 3, "delay": 0.01}),
    ("file_read", {"path": "."}),
    ("file_read", {"path": "notes.txt", "offset": 2}),
    ("file_read", {"path": "missing.txt"}),
    ("file_read", {"path": "../outside"}),
    ("shell_exec", {"command": "echo out; echo err >&2; exit 3"}),
    ("shell_exec", {"command": "seq 1 3000"}),
    ("shell_exec", {"command": "true | head -1"}),
    ("process", {"action": "poll", "pid": 1}),
]


def comparable(call: wb.Call) -> tuple[dict[str, Any], str]:
    """The canonical record and receipt, less call ids, durations and artifact locations."""
    envelope = call.envelope
    assert envelope is not None and call.receipt is not None
    record = envelope.canonical()
    record.pop("call_id")
    receipt = call.receipt
    for artifact in record["artifacts"]:
        receipt = receipt.replace(artifact["path"], Path(artifact["path"]).name)
        artifact["path"] = Path(artifact["path"]).name
    if isinstance(record["result"], dict):
        record["result"].pop("duration_ms", None)
    receipt = re.sub(r"call_[0-9a-f]{12,}", "call_<id>", receipt)
    return record, receipt


@pytest.fixture(scope="module", params=["in-process", "stdio", "http"])
def connected(
    request: pytest.FixtureRequest, served_root: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[wb.Registry]:
    tools = wb.Registry(history=":memory:", artifacts=tmp_path_factory.mktemp("artifacts"))
    server = None
    if request.param == "in-process":
        target: Any = wbmcp.build_server(demo.registry(served_root))
        conn = wbmcp.connect(target, tools=tools)
    elif request.param == "stdio":
        conn = wbmcp.connect(wbmcp.server_command(DEMO), tools=tools, env=demo_env(served_root))
    else:
        server = HttpServerProcess(served_root)
        conn = wbmcp.connect(server.url, tools=tools)
    yield tools
    conn.close()
    if server is not None:
        server.stop()
    tools.history.close()


@pytest.fixture(scope="module")
def direct(served_root: Path) -> wb.Registry:
    return demo.registry(served_root)


@pytest.mark.parametrize(
    ("name", "args"), CALLS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CALLS)]
)
def test_a_call_through_mcp_gives_the_envelope_of_a_direct_call(connected, direct, name, args):
    here = direct.invoke(name, args)
    here.wait(30)
    there = connected.invoke(name, args)
    there.wait(30)
    assert comparable(there) == comparable(here)
    assert there.state == here.state
    # MCP progress has no stream field: a workbench server's stderr and log arrive on stdout.
    streamed = "".join(here.output(stream) for stream in ("stdout", "stderr", "log"))
    assert sorted(there.output().splitlines()) == sorted(streamed.splitlines())


def test_an_approved_call_through_mcp_gives_the_envelope_of_a_direct_call(connected, direct):
    results = []
    for tools in (direct, connected):
        call = tools.invoke("publish", {"message": "hello"})
        assert wait_until(lambda call=call: call.state == "awaiting_approval")
        call.approve()
        call.wait(30)
        results.append(comparable(call))
    assert results[0] == results[1]


def test_the_connected_history_records_what_the_direct_one_does(connected, direct):
    def rows(tools: wb.Registry) -> list[tuple[Any, ...]]:
        return [
            (row["tool"], row["family"], row["state"], row["kind"], row["killed_by"])
            for row in tools.history.rows()
            if row["tool"] != "publish"
        ]

    assert rows(connected)[-len(CALLS) :] == rows(direct)[-len(CALLS) :]
