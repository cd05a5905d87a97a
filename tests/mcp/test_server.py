"""Serving a registry over MCP, checked with the SDK's own client: in process, over stdio and over
streamable HTTP on loopback. Also what the SDK's high-level server does that workbench does not."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from typing_extensions import TypedDict

import workbench as wb
from tests.conftest import group_left_after_exit, pid_alive, wait_for_exit, wait_until
from workbench import mcp as wbmcp
from workbench.families import Budgets
from workbench.mcp import demo
from workbench.mcp._approval import INPUT_KEY, STATE

DEMO = "workbench.mcp.demo:registry"
TRANSPORTS = ["stdio", "http"]


# ── helpers shared with test_mcp_client and test_mcp_roundtrip ──────────────────────────────


def values(text: str) -> dict[str, int]:
    """``name=123`` lines of a command's output."""
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line)
    return {name: int(value) for name, value in pairs if value.strip().isdigit()}


def demo_env(root: Path) -> dict[str, str]:
    return {"WORKBENCH_DEMO_ROOT": str(root)}


class HttpServerProcess:
    """``python -m workbench.mcp serve ... --http`` as a child process this test started."""

    def __init__(self, root: Path) -> None:
        self.process = subprocess.Popen(
            wbmcp.server_command(DEMO, http=True),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **demo_env(root)},
            text=True,
        )
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], 60)
        assert ready, "the HTTP server did not announce its URL"
        self.url = self.process.stdout.readline().strip()
        assert self.url.startswith("http://127.0.0.1:") and self.url.endswith("/mcp")

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        wait_ended(self.process)


def wait_ended(process: subprocess.Popen[bytes]) -> None:
    """Wait for ``process`` to exit (killed after 10 s) and close its stdout."""
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)
    if process.stdout is not None:
        process.stdout.close()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture(scope="module")
def served_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The workspace of the servers this module shares."""
    path = tmp_path_factory.mktemp("served")
    (path / "notes.txt").write_text("one\ntwo\nthree\n")
    return path


@pytest.fixture(scope="module")
def http_demo(served_root: Path) -> Iterator[HttpServerProcess]:
    """One HTTP demo server for this module's tests (each test connects its own client)."""
    server = HttpServerProcess(served_root)
    yield server
    server.stop()


@pytest.fixture
def wire(request: pytest.FixtureRequest, served_root: Path) -> Any:
    """``wire(**client_options)``: an SDK client of the demo server over the test's transport
    (stdio: a fresh server process per client; http: the module's server)."""
    transport = request.node.callspec.params["transport"]

    @asynccontextmanager
    async def open_client(**options: Any) -> AsyncIterator[Client]:
        if transport == "stdio":
            argv = wbmcp.server_command(DEMO)
            target: Any = StdioServerParameters(
                command=argv[0], args=argv[1:], env=demo_env(served_root)
            )
        else:
            target = request.getfixturevalue("http_demo").url
        async with Client(target, **options) as client:
            yield client

    return open_client


def record(result: types.CallToolResult) -> dict[str, Any]:
    """The canonical record a served result carries in its ``_meta``."""
    found = wbmcp.record_of(result)
    assert found is not None, f"no canonical record in {result.meta!r}"
    return found


def text_of(result: types.CallToolResult) -> str:
    assert len(result.content) == 1 and isinstance(result.content[0], types.TextContent)
    return result.content[0].text


def demo_tools(root: Path) -> wb.Registry:
    return demo.registry(root)


async def allow(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={})


async def decline(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="decline")


# ── listing ─────────────────────────────────────────────────────────────────────────────────


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_tools_are_listed_as_exported(root, mode):
    tools = demo_tools(root)
    exported = {tool["name"]: tool for tool in tools.export("mcp")}
    async with Client(wbmcp.build_server(tools), mode=mode) as client:
        listed = (await client.list_tools()).tools
    assert [tool.name for tool in listed] == tools.names()
    for tool in listed:
        wire = tool.model_dump(by_alias=True, exclude_none=True)
        expected = exported[tool.name]
        spec = tools.spec(tool.name)
        assert wire["description"] == expected["description"]
        assert wire["inputSchema"] == expected["inputSchema"]
        assert wire["annotations"] == expected["annotations"]
        if spec.output_schema is None or spec.family in ("json", "text"):
            # No output schema: none advertised; a json or text tool's own: the exported one.
            assert wire.get("outputSchema") == expected.get("outputSchema")
        else:
            # The command, listing and file families reshape the value: nothing advertised.
            assert "outputSchema" not in wire
        meta = wire["_meta"][wbmcp.SPEC_META_KEY]
        assert meta["permission"] == tools.permission(tool.name)
        assert meta["family"] == tools.spec(tool.name).family
    advertised = {tool.name for tool in listed if tool.output_schema is not None}
    assert advertised == {"word_stats"}
    assert exported["publish"]["annotations"]["destructiveHint"] is True
    assert exported["file_read"]["annotations"]["readOnlyHint"] is True


# ── results ─────────────────────────────────────────────────────────────────────────────────


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_result_is_the_receipt_as_text_and_the_record_rides_in_meta(root, mode):
    tools = demo_tools(root)
    async with Client(wbmcp.build_server(tools), mode=mode) as client:
        for name, args, ok in [
            ("greet", {"name": "Ada", "excited": "true"}, True),
            ("word_stats", {"text": "a b\nc"}, True),
            ("divide", {"a": 1, "b": 0}, False),
            ("lookup", {"key": "bob"}, False),
        ]:
            result = await client.call_tool(name, args)
            row = tools.history.get(record(result)["call_id"])
            assert row is not None
            assert text_of(result) == row["receipt"]
            assert record(result) == row["canonical"]
            assert result.is_error is (not ok)
            if name == "word_stats":
                # Its declared result, validated by the SDK's client against the schema.
                assert result.structured_content == {"words": 3, "lines": 2, "chars": 5}
            else:
                assert result.structured_content is None
    assert text_of(result).startswith("Error (not_found): No entry `bob`")
    assert tools.history.get(record(result)["call_id"])["kind"] == "not_found"


class Lines(TypedDict):
    lines: list[str]


@pytest.mark.anyio
async def test_a_cut_result_is_sent_whole_as_structured_content():
    tools = wb.Registry(history=":memory:", budgets=Budgets(json_chars=200))

    @tools.tool
    def numbers(n: int) -> Lines:
        """Number the lines."""
        return {"lines": [f"line {i}" for i in range(n)]}

    async with Client(wbmcp.build_server(tools)) as client:
        # The SDK's client validates structured content against the advertised outputSchema.
        small = await client.call_tool("numbers", {"n": 2})
        large = await client.call_tool("numbers", {"n": 500})
    assert small.structured_content == {"lines": ["line 0", "line 1"]}
    assert large.structured_content == {"lines": [f"line {i}" for i in range(500)]}
    cut = record(large)["result"]
    assert cut["kind"] == "json" and cut["truncated"] is True
    assert "full result JSON" in text_of(large)


class Reading(TypedDict):
    celsius: float


@pytest.mark.anyio
async def test_a_primitive_result_is_wrapped_and_sent_whole_even_when_cut():
    tools = wb.Registry(history=":memory:", budgets=Budgets(text_chars=100))

    @tools.tool(family="text", output_schema={"type": "string"})
    def shout(word: str, times: int = 1) -> str:
        """Shout a word."""
        return " ".join([word.upper()] * times)

    @tools.tool
    def thermometer(celsius: float) -> Reading:
        """Read the temperature."""
        return {"celsius": celsius}

    async with Client(wbmcp.build_server(tools)) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        shouted = await client.call_tool("shout", {"word": "hey"})
        long = await client.call_tool("shout", {"word": "hey", "times": 100})
        read = await client.call_tool("thermometer", {"celsius": 21.5})
    assert listed["shout"].output_schema == tools.export("mcp")[0]["outputSchema"]
    assert shouted.structured_content == {"result": "HEY"} and text_of(shouted) == "HEY"
    assert long.structured_content == {"result": " ".join(["HEY"] * 100)}
    assert record(long)["result"]["truncated"] is True and "full text" in text_of(long)
    assert read.structured_content == {"celsius": 21.5}


# ── a client that prefers structured content ────────────────────────────────────────────────


def what_a_model_reads(result: types.CallToolResult) -> Any:
    """What a host that prefers structured content hands its model (pydantic-ai does this):
    the structured content when there is any, else the text of the content blocks."""
    if result.structured_content is not None:
        return result.structured_content
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_client_preferring_structured_content_reads_receipts_and_declared_results(
    root, mode
):
    tools = demo_tools(root)
    calls = [
        ("greet", {"name": "Ada"}),
        ("divide", {"a": 1, "b": 4}),
        ("lookup", {"key": "ada"}),
        ("file_read", {"path": "."}),
        ("shell_exec", {"command": "echo hi"}),
        ("divide", {"a": 1, "b": 0}),  # failures too
        ("lookup", {"key": "bob"}),
        ("greet", {"nmae": "typo"}),
        ("word_stats", {"text": "one two\nthree"}),
    ]
    async with Client(wbmcp.build_server(tools), mode=mode) as client:
        read = [(name, await client.call_tool(name, args)) for name, args in calls]
    for name, result in read:
        row = tools.history.get(record(result)["call_id"])
        seen = what_a_model_reads(result)
        assert seen != row["canonical"] and seen != record(result)
        if name == "word_stats":
            assert seen == {"words": 3, "lines": 2, "chars": 13}  # the declared result
        else:
            assert seen == row["receipt"]  # what the workbench shows as "what the model sees"
    assert [result.is_error for _, result in read].count(True) == 3


# ── what the SDK's high-level server does, and workbench does not ───────────────────────────


@pytest.mark.anyio
async def test_the_sdk_high_level_server_drops_unknown_keys_and_stringifies_dicts():
    app = MCPServer("sdk")

    @app.tool()
    def add(a: int, b: int) -> dict:  # bare on purpose
        return {"sum": a + b}

    async with Client(app) as client:
        result = await client.call_tool("add", {"a": 1, "b": 2, "c": 3})
    assert not result.is_error  # `c` vanished without a word
    assert result.structured_content is None
    assert text_of(result) == '{\n  "sum": 3\n}'


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_workbench_refuses_unknown_keys_and_keeps_dicts_structured(mode):
    tools = wb.Registry(history=":memory:")

    @tools.tool
    def add(a: int, b: int) -> dict:  # bare on purpose
        """Add two numbers."""
        return {"sum": a + b}

    async with Client(wbmcp.build_server(tools), mode=mode) as client:
        refused = await client.call_tool("add", {"a": 1, "b": 2, "c": 3})
        added = await client.call_tool("add", {"a": "1", "b": 2})
    assert refused.is_error and refused.structured_content is None
    assert record(refused)["error"]["kind"] == "invalid_args"
    assert record(refused)["error"]["field"] == "c"
    assert text_of(refused).startswith("Error (invalid_args): Unknown argument `c`")
    assert not added.is_error and text_of(added) == '{"sum": 3}'
    assert added.structured_content is None and record(added)["result"] == {"sum": 3}


# ── approval through elicitation ────────────────────────────────────────────────────────────


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_always_ask_runs_when_the_person_allows_through_elicitation(root, mode):
    tools = demo_tools(root)
    asked: list[str] = []

    async def person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={})

    async with Client(wbmcp.build_server(tools), mode=mode, elicitation_callback=person) as client:
        result = await client.call_tool("publish", {"message": "hello"})
    assert not result.is_error and text_of(result) == "published: hello"
    assert asked and asked[0].startswith("Allow `publish` to run?")
    assert '"message": "hello"' in asked[0] and "posts the message publicly" in asked[0]
    events = tools.history.get(record(result)["call_id"])["events"]
    assert [e["type"] for e in events][:3] == [
        "tool.queued",
        "tool.approval_requested",
        "tool.approved",
    ]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (types.ElicitResult(action="decline"), "declined"),
        (types.ElicitResult(action="cancel"), "dismissed"),
        (types.ElicitResult(action="accept", content={"decision": "Deny"}), "chose Deny"),
    ],
)
async def test_always_ask_is_denied_when_the_person_says_no(root, mode, answer, why):
    tools = demo_tools(root)

    async def person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return answer

    async with Client(wbmcp.build_server(tools), mode=mode, elicitation_callback=person) as client:
        result = await client.call_tool("publish", {"message": "hello"})
    assert result.is_error
    error = record(result)["error"]
    assert error["kind"] == "user_denied" and why in error["message"]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_always_ask_is_denied_when_the_client_cannot_elicit(root, mode):
    tools = demo_tools(root)
    async with Client(wbmcp.build_server(tools), mode=mode) as client:
        result = await client.call_tool("publish", {"message": "hello"})
    assert result.is_error
    error = record(result)["error"]
    assert error["kind"] == "user_denied" and "does not support elicitation" in error["message"]
    assert [row["state"] for row in tools.history.rows()] == ["failed"]


YES = {INPUT_KEY: types.ElicitResult(action="accept", content={})}


async def answer_round(client: Client, message: str, state: Any) -> Any:
    """``publish`` sent again with the person's Allow and the sealed ``state`` of a round."""
    return await client.session.call_tool(
        "publish",
        {"message": message},
        input_responses=YES,
        request_state=state,
        allow_input_required=True,
    )


@pytest.mark.anyio
async def test_an_approval_round_cannot_be_forged_or_reused_for_other_arguments(root):
    tools = demo_tools(root)
    async with Client(wbmcp.build_server(tools), elicitation_callback=allow) as client:
        with pytest.raises(MCPError):  # a state the server never sealed
            await answer_round(client, "forged", STATE)
        first = await client.session.call_tool(
            "publish", {"message": "one"}, allow_input_required=True
        )
        assert isinstance(first, types.InputRequiredResult)
        with pytest.raises(MCPError):  # the sealed state is bound to the arguments it asked for
            await answer_round(client, "two", first.request_state)
        allowed = await answer_round(client, "one", first.request_state)
    assert isinstance(allowed, types.CallToolResult) and text_of(allowed) == "published: one"
    assert [row["arguments"] for row in tools.history.rows()] == [{"message": "one"}]


@pytest.mark.anyio
async def test_one_approval_allows_exactly_one_run_however_often_it_is_replayed(root):
    """A client that keeps the sealed answer of one approval round and sends it again (three
    times here) gets one run; the replays are denied, say why, and run nothing."""
    tools = demo_tools(root)
    async with Client(wbmcp.build_server(tools), elicitation_callback=allow) as client:
        first = await client.session.call_tool(
            "publish", {"message": "once"}, allow_input_required=True
        )
        assert isinstance(first, types.InputRequiredResult)
        answers = [await answer_round(client, "once", first.request_state) for _ in range(3)]
        # A new round, asked and answered, is a new run.
        again = await client.call_tool("publish", {"message": "once"})
    assert all(isinstance(answer, types.CallToolResult) for answer in answers)
    ran = [answer for answer in answers if not answer.is_error]
    assert len(ran) == 1 and text_of(ran[0]) == "published: once"
    for replay in answers[1:]:
        assert replay.is_error and record(replay)["error"]["kind"] == "user_denied"
        assert "already used" in record(replay)["error"]["message"]
    assert text_of(again) == "published: once"
    published = [row for row in tools.history.rows() if row["state"] == "succeeded"]
    assert len(published) == 2  # the one replayed answer, and the new round


@pytest.mark.anyio
async def test_invalid_arguments_to_an_always_ask_tool_are_refused_without_asking(root):
    tools = demo_tools(root)
    asked: list[str] = []

    async def person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={})

    async with Client(wbmcp.build_server(tools), elicitation_callback=person) as client:
        result = await client.call_tool("publish", {"messages": "typo"})
    assert record(result)["error"]["kind"] == "invalid_args" and asked == []


# ── over stdio and streamable HTTP ──────────────────────────────────────────────────────────


@pytest.mark.anyio
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_each_builtin_over_the_wire(wire, transport):
    async with wire() as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
        assert {"shell_exec", "process", "file_read", "artifact_read"} <= listed

        shell = await client.call_tool("shell_exec", {"command": "seq 1 5000; echo done"})
        shell_record = record(shell)
        assert not shell.is_error and shell_record["result"]["kind"] == "command"
        shell_result = shell_record["result"]
        assert shell_result["exit_code"] == 0 and shell_result["stdout_truncated"]
        assert text_of(shell).startswith("Process exited with code 0")

        stdout = shell_record["result"]["stdout_artifact"]
        artifact = shell_record["artifacts"][stdout]["path"]
        read = await client.call_tool("artifact_read", {"path": artifact, "offset": 4999})
        assert record(read)["result"]["text"] == "4999\n5000\ndone\n"

        listing = await client.call_tool("file_read", {"path": "."})
        names = [e["name"] for e in record(listing)["result"]["entries"]]
        assert "notes.txt" in names
        file = await client.call_tool("file_read", {"path": "notes.txt", "offset": 2})
        assert record(file)["result"]["text"] == "two\nthree\n"

        job = await client.call_tool("shell_exec", {"command": "sleep 30", "background": True})
        pid = record(job)["result"]["pid"]
        assert pid_alive(pid)
        poll = await client.call_tool("process", {"action": "poll", "pid": pid})
        assert record(poll)["result"]["running"] is True
        kill = await client.call_tool("process", {"action": "kill", "pid": pid})
        assert record(kill)["result"]["running"] is False
        assert wait_until(lambda: not pid_alive(pid), timeout=10)

        missing = await client.call_tool("file_read", {"path": "nope.txt"})
        assert missing.is_error and record(missing)["error"]["kind"] == "not_found"


@pytest.mark.anyio
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_unknown_keys_are_invalid_args_over_the_wire(wire, transport):
    async with wire() as client:
        result = await client.call_tool("file_read", {"path": ".", "recursive": True})
    assert result.is_error
    assert record(result)["error"]["kind"] == "invalid_args"
    assert record(result)["error"]["field"] == "recursive"


@pytest.mark.anyio
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_streamed_output_arrives_as_progress_notifications(wire, transport):
    received: list[tuple[float, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        received.append((value, message))

    async with wire() as client:
        result = await client.call_tool("count", {"n": 5, "delay": 0.1}, progress_callback=progress)
    assert record(result)["result"] == {"counted": 5}
    assert "".join(message or "" for _, message in received) == "1\n2\n3\n4\n5\n"
    assert len(received) >= 2  # streamed as it went, not once at the end
    steps = [value for value, _ in received]
    assert steps == sorted(set(steps))


@pytest.mark.anyio
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_cancelled_call_is_terminated_and_its_processes_are_gone(wire, transport):
    seen: list[str] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(message or "")

    command = "echo shell=$$; (sleep 60 & echo child=$!; wait)"
    async with wire() as client:
        with anyio.move_on_after(60):
            async with anyio.create_task_group() as group:

                async def call() -> None:
                    await client.call_tool("shell_exec", {"command": command}, None, progress)

                group.start_soon(call)
                while len(values("".join(seen))) < 2:
                    await anyio.sleep(0.02)
                group.cancel_scope.cancel()
        pids = values("".join(seen))
        assert set(pids) == {"shell", "child"}
        # Waits for each process's end itself (a pidfd), however loaded the machine is.
        still_running = await anyio.to_thread.run_sync(wait_for_exit, list(pids.values()))
        assert still_running == []
        assert not any(pid_alive(pid) for pid in pids.values())
        assert await anyio.to_thread.run_sync(group_left_after_exit, pids["shell"]) == []
        # The server is still serving after the cancellation.
        after = await client.call_tool("greet", {"name": "Ada"})
        assert text_of(after) == "Hello, Ada."


@pytest.mark.anyio
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_elicitation_over_the_wire(wire, transport):
    async with wire(elicitation_callback=allow) as client:
        allowed = await client.call_tool("publish", {"message": "hi"})
    async with wire(elicitation_callback=decline, mode="legacy") as client:
        assert client.protocol_version == "2025-11-25"
        declined = await client.call_tool("publish", {"message": "hi"})
    async with wire() as client:
        unable = await client.call_tool("publish", {"message": "hi"})
    assert text_of(allowed) == "published: hi"
    assert "declined" in record(declined)["error"]["message"]
    assert "does not support elicitation" in record(unable)["error"]["message"]


def test_the_cli_refuses_what_is_not_a_registry(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "workbench.mcp", "serve", "workbench.mcp.demo:ENTRIES"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "not a workbench Registry" in out.stderr


def test_serve_in_thread_serves_http_until_stopped(root):
    tools = demo_tools(root)
    with wbmcp.serve_in_thread(tools) as server:
        assert server.url.startswith("http://127.0.0.1:")

        async def greet() -> str:
            async with Client(server.url) as client:
                return text_of(await client.call_tool("greet", {"name": "Ada"}))

        assert anyio.run(greet) == "Hello, Ada."
    assert "stopped" in repr(server)


def test_a_served_registry_starts_without_the_heavy_schema_packages():
    """What a served registry's start time depends on, checked without a clock: until a call
    needs them, neither jsonschema nor its IRI grammars (seconds of CPU) are imported."""
    probe = (
        "import json, sys\n"
        "from workbench.check import load_registry\n"
        "from workbench.mcp import build_server\n"
        f"build_server(load_registry({DEMO!r}))\n"
        "print(json.dumps([m for m in ('jsonschema', 'rfc3987_syntax') if m in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
