"""Connecting to MCP servers: their tools as workbench tools, over stdio and streamable HTTP, and
another server's results, progress and questions mapped to envelopes, output and log lines."""

from __future__ import annotations

import os
import signal
import socket
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from pydantic import BaseModel

import workbench as wb
from tests.conftest import group_left_after_exit, pid_alive
from tests.mcp.test_server import (
    DEMO,
    TRANSPORTS,
    HttpServerProcess,
    demo_env,
    served_root,
    values,
    wait_until,
)
from workbench import mcp as wbmcp
from workbench.mcp import demo

__all__ = ["served_root"]  # a fixture, shared with test_mcp_server


@dataclass
class Remote:
    """A registry connected to the demo server over one transport."""

    tools: wb.Registry
    conn: wbmcp.Connection
    server: HttpServerProcess | None

    def run(self, name: str, args: dict[str, Any], timeout: float = 30) -> wb.Call:
        call = self.tools.invoke(name, args)
        call.wait(timeout)
        return call

    def server_pid(self) -> int:
        """The server process's pid: the parent of the supervisor of the shell ``shell_exec``
        starts."""
        call = self.run("shell_exec", {"command": "echo server=$(ps -o ppid= -p $PPID)"})
        return values(call.output())["server"]


def open_remote(transport: str, root: Path, tmp: Path, **options: Any) -> Remote:
    tools = wb.Registry(history=":memory:", artifacts=tmp / "artifacts", terminate_grace=1.0)
    if transport == "stdio":
        conn = wbmcp.connect(wbmcp.server_command(DEMO), tools=tools, env=demo_env(root), **options)
        return Remote(tools, conn, None)
    server = HttpServerProcess(root)
    return Remote(tools, wbmcp.connect(server.url, tools=tools, **options), server)


def close_remote(remote: Remote) -> None:
    remote.conn.close()
    if remote.server is not None:
        remote.server.stop()
    remote.tools.history.close()


@pytest.fixture(scope="module", params=TRANSPORTS)
def remote(
    request: pytest.FixtureRequest, served_root: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Remote]:
    """The demo server, connected once per transport for this module's tests."""
    connected = open_remote(request.param, served_root, tmp_path_factory.mktemp("client"))
    yield connected
    close_remote(connected)


@pytest.fixture
def own_remote(
    request: pytest.FixtureRequest, served_root: Path, tmp_path: Path
) -> Iterator[Remote]:
    """A demo server of this test's own (for tests that kill or close it)."""
    connected = open_remote(request.param, served_root, tmp_path)
    yield connected
    close_remote(connected)


# ── registering ─────────────────────────────────────────────────────────────────────────────


def test_the_servers_tools_are_registered_with_their_metadata(remote, served_root):
    tools, conn = remote.tools, remote.conn
    original = demo.registry(served_root)
    assert conn.names == original.names() and conn.skipped == {}
    assert conn.remote_names == {name: name for name in original.names()}
    assert conn.server_info["name"] == "workbench" and conn.alive
    for name in original.names():
        spec, served = tools.spec(name), original.spec(name)
        assert spec.ownership == "mcp"
        assert spec.input_schema == served.input_schema
        assert spec.description == served.description
        for field in ("read_only", "destructive", "idempotent", "open_world", "permission"):
            assert getattr(spec, field) == getattr(served, field), (name, field)
        assert (spec.family, spec.streaming, spec.effects) == (
            served.family,
            served.streaming,
            served.effects,
        )
    assert tools.spec("publish").permission == "always_ask"
    assert tools.spec("shell_exec").timeout is None
    assert tools.spec("greet").timeout == original.spec("greet").timeout + 5.0


# ── calling ─────────────────────────────────────────────────────────────────────────────────


def test_results_become_envelopes_of_their_family(remote):
    greet = remote.run("greet", {"name": "Ada", "excited": "yes"})
    assert greet.envelope.result == {"text": "Hello, Ada!"} and greet.receipt == "Hello, Ada!"
    assert greet.coercions and greet.arguments == {"name": "Ada", "excited": True}
    stats = remote.run("word_stats", {"text": "a b\nc"})
    assert stats.envelope.result == {"words": 3, "lines": 2, "chars": 5}
    divide = remote.run("divide", {"a": 1, "b": 0})
    assert divide.envelope.error.kind == "execution_error" and divide.state == "failed"
    lookup = remote.run("lookup", {"key": "bob"})
    assert lookup.envelope.error.kind == "not_found" and lookup.envelope.error.field == "key"
    rows = {row["call_id"]: row for row in remote.tools.history.rows()}
    assert rows[lookup.id]["kind"] == "not_found" and rows[greet.id]["state"] == "succeeded"


def test_each_builtin_through_the_connection(remote):
    shell = remote.run("shell_exec", {"command": "seq 1 5000; echo done"})
    result = shell.envelope.result
    assert result["kind"] == "command" and result["exit_code"] == 0
    assert result["stdout_truncated"] and shell.receipt.startswith("Process exited with code 0")
    assert shell.output().endswith("4999\n5000\ndone\n")  # streamed here as it ran there
    artifact = shell.envelope.artifacts[result["stdout_artifact"]].path
    read = remote.run("artifact_read", {"path": artifact, "offset": 4999})
    assert read.envelope.result["text"] == "4999\n5000\ndone\n"

    listing = remote.run("file_read", {"path": "."})
    assert "notes.txt" in [entry["name"] for entry in listing.envelope.result["entries"]]
    file = remote.run("file_read", {"path": "notes.txt", "limit": 1})
    assert file.envelope.result["text"] == "one\n" and file.envelope.result["kind"] == "file"

    job = remote.run("shell_exec", {"command": "sleep 30", "background": True})
    pid = job.envelope.result["pid"]
    assert pid_alive(pid)
    poll = remote.run("process", {"action": "poll", "pid": pid})
    assert poll.envelope.result["running"] is True
    kill = remote.run("process", {"action": "kill", "pid": pid})
    assert kill.envelope.result["running"] is False and wait_until(lambda: not pid_alive(pid))


def test_unknown_arguments_are_refused_before_anything_is_sent(remote):
    call = remote.run("file_read", {"path": ".", "recursive": True})
    assert call.envelope.error.kind == "invalid_args" and call.envelope.error.field == "recursive"
    assert "tool.started" not in [event.type for event in call.events]


def test_streamed_output_arrives_while_the_call_runs(remote):
    call = remote.tools.invoke("count", {"n": 20, "delay": 0.1})
    assert wait_until(lambda: "3\n" in call.output())
    assert not call.done  # output arrived before the result
    envelope = call.wait(30)
    assert envelope.result == {"counted": 20}
    assert call.output() == "".join(f"{i}\n" for i in range(1, 21))
    types = [event.type for event in call.events]
    assert types.count("tool.output") >= 2 and types[-1] == "tool.completed"


def test_terminate_cancels_the_remote_call_and_its_processes_end(remote):
    command = "echo shell=$$; (sleep 60 & echo child=$!; wait) & echo bg=$!; wait"
    call = remote.tools.invoke("shell_exec", {"command": command})
    assert wait_until(lambda: {"shell", "child"} <= set(values(call.output())))
    pids = values(call.output())
    assert all(pid_alive(pid) for pid in pids.values())
    call.terminate()
    envelope = call.wait(15)
    assert envelope.killed_by == "user" and envelope.error.kind == "terminated"
    assert call.state == "terminated"
    assert wait_until(lambda: not any(pid_alive(pid) for pid in pids.values()))
    assert group_left_after_exit(pids["shell"]) == []
    assert remote.run("greet", {"name": "Ada"}).receipt == "Hello, Ada."  # still connected


def test_always_ask_is_asked_at_the_card_and_answered_for_the_server(remote):
    call = remote.tools.invoke("publish", {"message": "hi"})
    assert wait_until(lambda: call.state == "awaiting_approval")
    call.approve()
    assert call.wait(30).result == "published: hi"
    assert "the server asked: Allow `publish` to run?" in call.output("log")
    assert "answered Allow" in call.output("log")

    refused = remote.tools.invoke("publish", {"message": "no"})
    assert wait_until(lambda: refused.state == "awaiting_approval")
    refused.deny("not today")
    assert refused.wait(10).error.kind == "user_denied"
    assert "tool.started" not in [event.type for event in refused.events]  # never sent


def test_a_client_without_elicitation_gets_the_servers_denial(served_root, tools):
    conn = wbmcp.connect(
        wbmcp.build_server(demo.registry(served_root)), tools=tools, elicitation=False
    )
    with conn:
        call = tools.invoke("publish", {"message": "hi"})
        assert wait_until(lambda: call.state == "awaiting_approval")
        call.approve()  # the person allowed it here, but the server could not ask its own way
        error = call.wait(10).error
    assert error.kind == "user_denied" and "does not support elicitation" in error.message


# ── failures of the connection ──────────────────────────────────────────────────────────────


@pytest.mark.parametrize("own_remote", TRANSPORTS, indirect=True)
def test_a_server_killed_mid_call_ends_the_call_unavailable(own_remote):
    server_pid = own_remote.server_pid()
    call = own_remote.tools.invoke("count", {"n": 600, "delay": 0.05})
    assert wait_until(lambda: "2\n" in call.output())
    os.kill(server_pid, signal.SIGKILL)
    started = time.monotonic()
    envelope = call.wait(30)
    assert time.monotonic() - started < 15
    # The connection is over: only a new connect helps, so a retry is not suggested.
    assert envelope.error.kind == "unavailable" and not envelope.error.retryable
    assert "wb.mcp.connect" in envelope.error.recovery_hint
    assert "retry later" not in (call.receipt or "")
    assert "1\n2\n" in call.output()
    after = own_remote.run("greet", {"name": "Ada"}, timeout=30)
    assert after.envelope.error.kind == "unavailable"
    if own_remote.conn.transport == "stdio":
        assert wait_until(lambda: not own_remote.conn.alive)
        assert "serving 10 tools" in envelope.error.details["server_stderr_tail"]


@pytest.mark.parametrize("own_remote", ["stdio"], indirect=True)
def test_close_ends_the_server_process_and_unregisters_the_tools(own_remote):
    server_pid = own_remote.server_pid()
    names = own_remote.conn.names
    own_remote.conn.close()
    assert wait_until(lambda: not pid_alive(server_pid))
    assert not any(name in own_remote.tools for name in names)
    assert own_remote.conn.closed and own_remote.conn.stderr_path is not None
    assert not own_remote.conn.stderr_path.exists()
    own_remote.conn.close()  # idempotent


@pytest.mark.parametrize("own_remote", ["stdio"], indirect=True)
def test_connecting_again_replaces_the_previous_connection(own_remote, served_root):
    first_pid = own_remote.server_pid()
    again = wbmcp.connect(
        wbmcp.server_command(DEMO), tools=own_remote.tools, env=demo_env(served_root)
    )
    try:
        assert own_remote.conn.closed and wait_until(lambda: not pid_alive(first_pid))
        assert again.names == own_remote.conn.names
        assert own_remote.run("greet", {"name": "Ada"}).receipt == "Hello, Ada."
    finally:
        again.close()


def test_unreachable_servers_raise_connection_error(tools):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(ConnectionError):
        wbmcp.connect(f"http://127.0.0.1:{port}/mcp", tools=tools, startup_timeout=30)
    with pytest.raises(ConnectionError):
        wbmcp.connect([sys.executable, "-c", "import sys; sys.exit(3)"], tools=tools)
    assert time.monotonic() - started < 30
    assert len(tools) == 0


def test_a_server_that_never_answers_is_given_up_and_stopped(tools, tmp_path):
    pid_file = tmp_path / "pid"
    code = (
        "import os, pathlib, time; "
        f"pathlib.Path({str(pid_file)!r}).write_text(str(os.getpid())); time.sleep(60)"
    )
    started = time.monotonic()
    with pytest.raises(ConnectionError, match="did not complete the MCP handshake"):
        wbmcp.connect([sys.executable, "-c", code], tools=tools, startup_timeout=3)
    assert time.monotonic() - started < 10
    assert wait_until(pid_file.exists)
    assert wait_until(lambda: not pid_alive(int(pid_file.read_text())))


# ── another server's results ────────────────────────────────────────────────────────────────


class Forecast(BaseModel):
    city: str
    celsius: int


def foreign_server() -> MCPServer:
    app = MCPServer("foreign")

    @app.tool(structured_output=False)
    def getWeather(city: str) -> str:  # a foreign server's camelCase name
        """Say the weather."""
        return f"Sunny in {city}"

    @app.tool()
    def temperature(city: str) -> int:
        """A primitive, which the SDK wraps as {"result": ...} structured content."""
        return 21

    @app.tool()
    def forecast(city: str) -> Forecast:
        """A typed forecast."""
        return Forecast(city=city, celsius=21)

    @app.tool()
    def raw(city: str) -> dict:  # bare on purpose: the SDK sends it as text
        """An untyped dict."""
        return {"city": city}

    @app.tool()
    def broken(city: str) -> str:
        """Always fails."""
        raise ToolError(f"no weather station in {city}")

    @app.tool()
    def relayed(path: str) -> types.CallToolResult:
        """Fails with a workbench failure receipt as its text."""
        receipt = f"Error (not_found): no file {path}\nhint: list the parent directory"
        return types.CallToolResult(content=[types.TextContent(text=receipt)], is_error=True)

    @app.tool()
    def wired(path: str) -> types.CallToolResult:
        """Fails with a seed 000 wire failure as its text."""
        wire = wb.failure("rejected", f"{path} is off limits", field="path").to_wire()
        return types.CallToolResult(content=[types.TextContent(text=wire)], is_error=True)

    @app.tool(structured_output=False)
    async def slow(steps: int, ctx: Context) -> str:
        """Report progress."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return "finished"

    @app.tool()
    def picture() -> Image:
        """An image."""
        return Image(data=b"\x89PNG fake", format="png")

    return app


@pytest.fixture
def foreign(tools: wb.Registry) -> Iterator[wbmcp.Connection]:
    with wbmcp.connect(foreign_server(), tools=tools, prefix="wx_") as conn:
        yield conn


def run(tools: wb.Registry, name: str, args: dict[str, Any] | None = None) -> wb.Call:
    call = tools.invoke(name, args or {})
    call.wait(30)
    return call


def test_a_foreign_servers_tools_get_names_and_mcp_default_hints(tools, foreign):
    assert foreign.remote_names["wx_get_weather"] == "getWeather"
    spec = tools.spec("wx_get_weather")
    assert (spec.read_only, spec.destructive, spec.open_world) == (False, True, True)
    assert spec.ownership == "mcp" and spec.timeout == 120.0 and spec.permission == "always_allow"
    # Its structured content rides in the result beside the text; the SDK's client checks it.
    assert spec.family == "text"
    forecast_schema = tools.spec("wx_forecast").output_schema  # the server's, kept
    assert forecast_schema is not None and forecast_schema["required"] == ["city", "celsius"]


def test_a_foreign_servers_results_map_to_families_and_kinds(tools, foreign):
    weather = run(tools, "wx_get_weather", {"city": "Oslo"})
    assert (
        weather.envelope.result == {"text": "Sunny in Oslo"} and weather.receipt == "Sunny in Oslo"
    )
    temperature = run(tools, "wx_temperature", {"city": "Oslo"})
    # The text is what the model reads; the structured content is kept as sent: no guessing.
    assert temperature.receipt == "21"
    assert temperature.envelope.result == {"text": "21", "structured": {"result": 21}}
    forecast = run(tools, "wx_forecast", {"city": "Oslo"})
    assert forecast.envelope.result["structured"] == {"city": "Oslo", "celsius": 21}
    assert forecast.receipt == forecast.envelope.result["text"]
    raw = run(tools, "wx_raw", {"city": "Oslo"}).envelope  # the SDK sent indented JSON text
    assert raw.result == {"text": '{\n  "city": "Oslo"\n}'}
    broken = run(tools, "wx_broken", {"city": "Oslo"}).envelope
    assert broken.error.kind == "execution_error" and "no weather station" in broken.error.message
    relayed = run(tools, "wx_relayed", {"path": "a.txt"}).envelope
    assert relayed.error.kind == "not_found" and relayed.error.message == "no file a.txt"
    assert relayed.error.recovery_hint == "list the parent directory"
    wired = run(tools, "wx_wired", {"path": "/etc"}).envelope
    assert (wired.error.kind, wired.error.field) == ("rejected", "path")


def test_a_foreign_servers_progress_is_the_calls_progress_and_binary_content_kept(tools, foreign):
    from workbench.widgets import card

    slow = run(tools, "wx_slow", {"steps": 3})
    assert slow.receipt == "finished"
    reports = [e.data for e in slow.events if e.type == "tool.progress"]
    assert reports == [{"done": step, "total": 3, "message": f"step {step}"} for step in (1, 2, 3)]
    assert slow.output("log") == ""  # progress is not a log line any more
    row = tools.history.get(slow.id)
    assert row is not None
    kept = [e for e in row["events"] if e["type"] == "tool.progress"]
    assert [(e["done"], e["message"]) for e in kept] == [(n, f"step {n}") for n in (1, 2, 3)]
    html = card(slow).static_html()
    assert "<progress class='wb-progress-bar' value='3' max='3'>" in html
    assert "3/3 (100%)" in html and "<span class='wb-progress-message'>step 3</span>" in html
    picture = run(tools, "wx_picture")
    assert len(picture.envelope.artifacts) == 1
    path = picture.envelope.artifacts[0].path
    assert picture.receipt == f"[image (image/png, 9 bytes) saved as {path}]"
    assert path.endswith(".png") and Path(path).read_bytes() == b"\x89PNG fake"


def test_a_foreign_question_for_an_unapproved_call_is_declined_and_noted(tools):
    app = MCPServer("asks")

    class Answer(BaseModel):
        ok: bool

    @app.tool(structured_output=False)
    async def confirm(ctx: Context) -> str:
        """Ask the user."""
        answer = await ctx.elicit("Really?", Answer)
        return answer.action

    # MCPServer's ctx.elicit needs the handshake era's back-channel.
    with wbmcp.connect(app, tools=tools, mode="legacy"):
        call = run(tools, "confirm")
    assert call.receipt == "decline"
    assert "the server asked: Really?" in call.output("log")


# ── from async code (a Jupyter kernel's running loop) ───────────────────────────────────────


@pytest.mark.anyio
async def test_connect_and_call_from_a_running_loop(served_root, tools):
    conn = await wbmcp.connect_async(wbmcp.build_server(demo.registry(served_root)), tools=tools)
    try:
        call = tools.invoke("count", {"n": 3, "delay": 0.01})
        envelope = await call
        assert envelope.result == {"counted": 3} and call.output() == "1\n2\n3\n"
        slow = tools.invoke("count", {"n": 50, "delay": 0.05})
        await anyio.sleep(0.1)
        with pytest.raises(TimeoutError):
            slow.wait(0.3)  # blocking wait works on a running loop too: calls run elsewhere
        slow.terminate()
        assert (await slow).killed_by == "user"
    finally:
        await conn.aclose()
    assert len(tools) == 0
