"""Servers nobody here wrote, connected over stdio: the reference ``server-filesystem`` and
``server-everything`` (npm, pinned, started by the test from ``.node/``). A foreign call's receipt
is what an MCP host would put in front of a model: its text content, cut as text; images named by
kind, size and path; resource links listed. Its structured content is kept in the result."""

from __future__ import annotations

import base64
import gzip
import html
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

import workbench as wb
from tests.conftest import wait_until
from tests.mcp.support import node_tool
from workbench import mcp as wbmcp
from workbench.families import Budgets

TEXT_CHARS = 4_000
BIG_LINES = 3_000


def png(width: int, height: int) -> bytes:
    """A valid greyscale PNG, all black."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    rows = b"".join(b"\x00" + b"\x00" * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def registry(tmp: Path) -> wb.Registry:
    return wb.Registry(
        history=":memory:", artifacts=tmp / "artifacts", budgets=Budgets(text_chars=TEXT_CHARS)
    )


def run(tools: wb.Registry, name: str, args: dict[str, Any]) -> wb.Call:
    call = tools.invoke(name, args)
    call.wait(60)
    return call


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("served-files")
    (root / "small.txt").write_text("alpha\nbeta\n")
    lines = [f"line {number:05d} " + "x" * 60 for number in range(BIG_LINES)]
    (root / "big.txt").write_text("\n".join(lines) + "\n")  # 216 KB
    (root / "dot.png").write_bytes(png(4, 3))
    return root


@pytest.fixture(scope="module")
def filesystem(
    files: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[wb.Registry, wbmcp.Connection]]:
    tools = registry(tmp_path_factory.mktemp("fs-client"))
    conn = wbmcp.connect([node_tool("mcp-server-filesystem"), str(files)], tools=tools)
    yield tools, conn
    conn.close()
    tools.history.close()


@pytest.fixture(scope="module")
def everything(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[wb.Registry, wbmcp.Connection]]:
    tools = registry(tmp_path_factory.mktemp("everything-client"))
    conn = wbmcp.connect([node_tool("mcp-server-everything")], tools=tools)
    yield tools, conn
    conn.close()
    tools.history.close()


# ── server-filesystem ───────────────────────────────────────────────────────────────────────


def test_a_text_file_reads_as_its_text_with_the_structured_content_kept(filesystem, files):
    tools, _ = filesystem
    call = run(tools, "read_text_file", {"path": str(files / "small.txt")})
    assert call.state == "succeeded"
    assert call.receipt == "alpha\nbeta\n"  # not {"content": ...}
    assert call.envelope.result["structured"] == {"content": "alpha\nbeta\n"}


def test_a_large_file_is_cut_as_text_and_kept_whole(filesystem, files):
    tools, _ = filesystem
    call = run(tools, "read_text_file", {"path": str(files / "big.txt")})
    full = (files / "big.txt").read_text()
    receipt = call.receipt
    head, tail = receipt.splitlines()[0], receipt.splitlines()[-2]
    assert head == "line 00000 " + "x" * 60  # the model sees the file's first lines…
    assert tail == f"line {BIG_LINES - 1:05d} " + "x" * 60  # …and its last ones
    assert "[output truncated" in receipt and len(receipt) < TEXT_CHARS + 500
    result = call.envelope.result
    assert result["truncated"] is True and result["chars"] == len(full)
    text_artifact = Path(call.envelope.artifacts[result["text_artifact"]].path)
    assert text_artifact.read_text() == full
    assert receipt.endswith(
        f"full text ({len(full)} chars): {text_artifact} (read more with artifact_read)"
    )
    # The structured content is as large: a bounded stand-in, the value itself an artifact.
    structured = result["structured"]
    assert structured["truncated"] is True
    held = Path(call.envelope.artifacts[structured["result_artifact"]].path)
    assert '"content": ' in held.read_text() and len(held.read_text()) > len(full)


def listed_schema(conn: wbmcp.Connection, remote_name: str) -> dict[str, Any]:
    return next(tool for tool in conn.listed if tool["name"] == remote_name)["outputSchema"]


@pytest.mark.anyio
async def test_a_foreign_output_schema_is_kept_and_re_served_with_its_structured_content(
    filesystem, files
):
    tools, conn = filesystem
    schema = listed_schema(conn, "read_text_file")
    assert tools.spec("read_text_file").output_schema == schema
    full = (files / "big.txt").read_text()
    # Served again, the tool advertises the server's schema and sends the server's structured
    # content whole (the SDK's client checks it against that schema), though it was cut here.
    async with Client(wbmcp.build_server(tools)) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        small = await client.call_tool("read_text_file", {"path": str(files / "small.txt")})
        big = await client.call_tool("read_text_file", {"path": str(files / "big.txt")})
    assert listed["read_text_file"].output_schema == schema
    assert small.structured_content == {"content": "alpha\nbeta\n"}
    assert big.structured_content == {"content": full}


def test_an_image_is_saved_and_named_in_the_receipt(filesystem, files):
    tools, _ = filesystem
    call = run(tools, "read_media_file", {"path": str(files / "dot.png")})
    artifacts = call.envelope.artifacts
    assert len(artifacts) == 1
    path = Path(artifacts[0].path)
    size = (files / "dot.png").stat().st_size
    assert call.receipt == f"[image (image/png, {size} bytes) saved as {path}]"
    assert path.read_bytes() == (files / "dot.png").read_bytes()
    assert "base64" not in call.receipt and "result.json" not in call.receipt


def test_destructive_tools_ask_first_and_hints_set_the_default_permission(filesystem, files):
    tools, conn = filesystem
    asking = {name for name in conn.names if tools.permission(name) == "always_ask"}
    assert asking == {"write_file", "edit_file", "move_file"}  # destructiveHint: true
    assert tools.spec("read_text_file").read_only and not tools.spec("write_file").read_only
    assert tools.spec("write_file").destructive
    # Neither hint: the registry's default.
    assert tools.permission("create_directory") == "always_allow"

    target = files / "written.txt"
    denied = tools.invoke("write_file", {"path": str(target), "content": "no"})
    assert wait_until(lambda: denied.pending_action == "approval", timeout=30)
    assert not target.exists()  # nothing ran while it waits
    denied.deny()
    assert denied.wait(30).error.kind == "user_denied" and not target.exists()

    allowed = tools.invoke("write_file", {"path": str(target), "content": "yes"})
    assert wait_until(lambda: allowed.pending_action == "approval", timeout=30)
    allowed.approve()
    assert allowed.wait(30).ok and target.read_text() == "yes"

    tools.set_permission("write_file", "always_allow")  # the person's override
    try:
        direct = run(tools, "write_file", {"path": str(target), "content": "again"})
        events = [event.type for event in direct.events]
        assert direct.state == "succeeded" and "tool.approval_requested" not in events
        assert target.read_text() == "again"
    finally:
        tools.set_permission("write_file", None)


# ── server-everything ───────────────────────────────────────────────────────────────────────


def test_plain_text_is_the_receipt(everything):
    tools, _ = everything
    call = run(tools, "echo", {"message": "hello"})
    assert call.receipt == "Echo: hello" and call.envelope.result == {"text": "Echo: hello"}


def test_an_image_among_text_is_named_in_place(everything):
    tools, _ = everything
    call = run(tools, "get_tiny_image", {})
    lines = call.receipt.splitlines()
    path = call.envelope.artifacts[0].path
    size = Path(path).stat().st_size
    assert lines[1] == f"[image (image/png, {size} bytes) saved as {path}]"
    assert Path(path).read_bytes().startswith(b"\x89PNG")
    assert lines[0] != lines[1] and len(lines) == 3  # the server's own words around it


def test_resource_links_are_listed(everything):
    tools, _ = everything
    call = run(tools, "get_resource_links", {"count": 2})
    links = [line for line in call.receipt.splitlines() if line.startswith("[resource link: ")]
    assert len(links) == 2
    assert "<demo://resource/dynamic/" in links[0] and "(text/plain)" in links[0]


def test_structured_content_is_kept_and_the_text_is_read(everything):
    tools, conn = everything
    assert tools.spec("get_structured_content").output_schema == listed_schema(
        conn, "get-structured-content"
    )
    call = run(tools, "get_structured_content", {"location": "New York"})
    structured = call.envelope.result["structured"]
    assert set(structured) == {"temperature", "conditions", "humidity"}
    assert call.receipt == call.envelope.result["text"]


def test_a_tool_that_runs_only_as_a_task_is_called_as_one(everything):
    tools, conn = everything
    assert conn.unavailable == {}  # simulate-research-query: execution.taskSupport "required"
    call = run(tools, "simulate_research_query", {"topic": "tides"})
    assert call.state == "succeeded", call.envelope.error
    assert call.receipt.startswith("# Research Report: tides")
    # Each status the server reported while polled is the call's progress, kept in the history.
    # The server spends a second on each of its four stages and suggests polling once a second,
    # so which stages a poll lands in is the scheduler's: what holds is their order, that the
    # task was seen working before it was seen done, and that the last status is its end.
    messages = [e.data["message"] for e in call.events if e.type == "tool.progress"]
    stages = ["Gathering sources", "Analyzing content", "Synthesizing findings"]
    stages.append("Generating report")
    seen = [stages.index(m.partition(": ")[2].removesuffix("...")) for m in messages if ": " in m]
    assert messages[0] in ("working", "working: Gathering sources..."), messages
    assert seen == sorted(seen) and messages[-1].startswith("completed: "), messages
    assert len(messages) >= 2 and all(m.startswith("working") for m in messages[:-1]), messages
    row = tools.history.get(call.id)
    assert row is not None and row["state"] == "succeeded"


def test_terminating_a_task_cancels_it_on_the_server(everything):
    tools, _ = everything
    call = tools.invoke("simulate_research_query", {"topic": "eclipses"})
    assert wait_until(lambda: any(e.type == "tool.progress" for e in call.events), 30)
    call.terminate()
    envelope = call.wait(30)
    assert envelope.error is not None and envelope.error.kind == "terminated"


def test_a_blob_resource_is_saved_and_named_by_kind_size_and_path(everything):
    tools, _ = everything
    data = "data:text/plain;base64," + base64.b64encode(b"hello world").decode()
    args = {"outputType": "resource", "name": "hello.txt.gz", "data": data}
    call = run(tools, "gzip_file_as_resource", args)
    path = Path(call.envelope.artifacts[0].path)
    size = path.stat().st_size
    expected = f"(application/gzip, {size} bytes) saved as {path}]"
    assert call.receipt.startswith("[blob demo://") and call.receipt.endswith(expected)
    assert gzip.decompress(path.read_bytes()) == b"hello world"


def test_a_markdown_resource_reads_as_its_text_and_its_view_renders_it(everything):
    # Notebook 06's card showed server-everything's architecture.md as one JSON string with
    # \n escapes.
    _, conn = everything
    read = conn.read("demo://resource/static/document/architecture.md")
    assert read.ok, read
    text = read.result["text"]
    shown = read._repr_mimebundle_()["text/html"]
    assert "\\n" not in shown and "wb-result-text" in shown
    first_line = next(line for line in text.splitlines() if line.strip())
    assert html.escape(first_line, quote=False) in shown
    view = wb.widgets.result_view(read)
    drawn = view.static_html()
    assert "wb-markdown" in drawn and ("<h1>" in drawn or "<h2>" in drawn), drawn[:500]
