"""What each kind of MCP client hands its model of a served tool with an output schema, read
with the official ``mcp`` SDK client: a client that reads the text gets the receipt, cut to its
budget; a client that prefers structured content gets the whole result. The served call's row
and card say how much more, and the inspector shows both, side by side, escaped."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from typing_extensions import TypedDict

import workbench as wb
from workbench import mcp as wbmcp
from workbench.declare import client_views
from workbench.widgets import CallCard, EnvelopeInspector
from workbench.widgets.inspector import envelope_of_row

XSS = "<img src=x onerror=alert(1)><script>alert(2)</script>"


class Item(TypedDict):
    sku: str
    name: str
    qty: int


class Inventory(TypedDict):
    items: list[Item]


def inventory_registry(tmp_path: Any) -> wb.Registry:
    tools = wb.Registry(history=tmp_path / "history.sqlite", artifacts=tmp_path / "artifacts")

    @tools.tool
    def inventory(n: int) -> Inventory:
        """The first ``n`` items in stock (names are whatever the warehouse typed)."""
        return stock(n)  # type: ignore[return-value]

    return tools


def text_of(result: Any) -> str:
    return result.content[0].text


def row_of(tools: wb.Registry, call_id: str) -> dict[str, Any]:
    return next(row for row in tools.history.rows() if row["call_id"] == call_id)


def chars_in(note: str) -> tuple[int, int]:
    """The structured size and the receipt size a card note names."""
    structured = re.search(r"structuredContent: ([\d,]+) chars", note)
    receipt = re.search(r"beside this ([\d,]+)-char receipt", note)
    assert structured and receipt, note
    return int(structured[1].replace(",", "")), int(receipt[1].replace(",", ""))


@pytest.mark.anyio
async def test_the_sdk_client_gets_what_the_card_says_each_client_gets(tmp_path):
    import pydantic_core

    tools = inventory_registry(tmp_path)
    with wbmcp.serve_in_thread(tools) as server:  # over the wire, on 127.0.0.1
        async with Client(server.url) as client:
            small = await client.call_tool("inventory", {"n": 3})
            large = await client.call_tool("inventory", {"n": 3000})
    # What a client hands its model of the structured content: one line of JSON without
    # spaces, as pydantic-ai writes a tool's return (pydantic_core), not spaced JSON.
    structured = pydantic_core.to_json(large.structured_content).decode()
    assert structured == json.dumps(
        large.structured_content, ensure_ascii=False, separators=(",", ":")
    )
    text = text_of(large)
    assert len(structured) > 4 * len(text)  # the receipt is cut; structured content is not
    row = row_of(tools, wbmcp.record_of(large)["call_id"])
    assert row["receipt"] == text and row["truncated"]
    notes = [note for note in row["warnings"] if "structuredContent" in note]
    assert len(notes) == 1
    assert chars_in(notes[0]) == (len(structured), len(text))

    spec = tools.spec("inventory")
    envelope = envelope_of_row(row)
    assert envelope is not None
    views = client_views(spec, envelope, row["receipt"], tools.artifacts.resolve)
    assert views.text == text and views.structured == structured
    assert views.extra_chars == len(structured) - len(text)

    small_row = row_of(tools, wbmcp.record_of(small)["call_id"])
    assert not [note for note in small_row["warnings"] if "structuredContent" in note]
    assert json.loads(text_of(small)) == small.structured_content  # uncut: the same value
    tools.history.close()


def test_the_inspector_shows_each_client_of_a_served_call_escaped(tmp_path):
    tools = inventory_registry(tmp_path)
    server = wbmcp.serve_in_thread(tools)
    try:
        viewer = wb.Registry(history=":memory:", artifacts=tmp_path / "viewer")
        with wbmcp.connect(server.url, tools=viewer) as conn:
            assert conn.names == ["inventory"]
            viewer.invoke("inventory", {"n": 3000}).wait(60)
        served = next(row for row in tools.history.rows() if row["tool"] == "inventory")
    finally:
        server.stop()

    inspector = EnvelopeInspector.from_row(
        served, spec=tools.spec("inventory"), resolve=tools.artifacts.resolve
    )
    text, structured = inspector.pane("text_client"), inspector.pane("structured_client")
    assert text.text == served["receipt"]
    note = next(w for w in served["warnings"] if "structuredContent" in w)
    assert chars_in(note) == (structured.chars, text.chars)
    assert f"{structured.chars - text.chars:,} more chars" in inspector.clients_note
    html = inspector.static_html()
    assert "As each client sees it" in html and html.count("wb-pane-structured_client") == 1
    assert "<script>" not in html and "<img" not in html and "&lt;script&gt;" in html
    tools.history.close()
    viewer.history.close()


def test_a_connected_tool_shows_what_its_servers_clients_get(tmp_path):
    foreign = MCPServer("stock")

    @foreign.tool()
    def inventory(n: int) -> Inventory:
        """The first ``n`` items in stock."""
        return stock(n)  # type: ignore[return-value]

    tools = wb.Registry(history=":memory:", artifacts=tmp_path / "artifacts")
    with wbmcp.connect(foreign, tools=tools):
        call = tools.invoke("inventory", {"n": 2000})
        call.wait(60)
    assert call.state == "succeeded"
    whole = json.dumps(stock(n=2000), ensure_ascii=False, separators=(",", ":"))
    seen = EnvelopeInspector(call)
    assert [pane["key"] for pane in seen.clients] == ["text_client", "structured_client"]
    assert seen.pane("structured_client").text == whole
    assert json.loads(seen.pane("text_client").text) == json.loads(whole)  # its whole text
    assert len(call.receipt or "") < len(seen.pane("text_client").text)  # our model's is cut
    html = seen.static_html() + CallCard(call).static_html()
    assert "<script>" not in html and "<img" not in html
    tools.history.close()


def test_a_cut_call_says_on_its_card_what_a_structured_client_gets(tmp_path):
    tools = inventory_registry(tmp_path)
    call = tools.invoke("inventory", {"n": 3000})
    call.wait(30)
    card = CallCard(call).static_html()
    whole = len(json.dumps(stock(3000), ensure_ascii=False, separators=(",", ":")))
    assert f"structuredContent: {whole:,} chars" in card
    assert f"beside this {len(call.receipt or ''):,}-char receipt" in card
    assert "<script>" not in card and "<img" not in card
    tools.history.close()


def unplaced(text: str) -> str:
    """``text`` with every path cut to its file name."""
    return re.sub(r"\S*/", "", text)


def stock(n: int) -> dict[str, Any]:
    """What ``inventory_registry``'s tool returns for ``n``."""
    return {
        "items": [
            {"sku": f"SKU-{i:05d}", "name": f"item {i} {XSS}", "qty": i % 17} for i in range(n)
        ]
    }


def test_a_tool_without_structured_content_has_no_client_views(tmp_path):
    tools = wb.Registry(history=":memory:", artifacts=tmp_path / "artifacts")

    @tools.tool
    def shout(word: str) -> dict:
        """Shout ``word``."""
        return {"said": word.upper()}

    call = tools.invoke("shout", {"word": XSS})
    call.wait(10)
    inspector = EnvelopeInspector(call)
    assert inspector.clients == [] and "As each client sees it" not in inspector.static_html()
    assert not [note for note in call.notes if "structuredContent" in note]
    tools.history.close()


@pytest.mark.parametrize("n", [3, 3000])
def test_a_workbench_served_tool_connected_from_another_shows_each_client(tmp_path, n):
    tools = inventory_registry(tmp_path)
    server = wbmcp.serve_in_thread(tools)
    try:
        viewer = wb.Registry(history=":memory:", artifacts=tmp_path / "viewer")
        with wbmcp.connect(server.url, tools=viewer) as conn:
            # The tool's schema as its author declared it, advertised again as it was.
            assert viewer.spec("inventory").output_schema == tools.spec("inventory").output_schema
            listed = next(tool for tool in conn.listed if tool["name"] == "inventory")
            assert viewer.export("mcp")[0]["outputSchema"] == listed["outputSchema"]
            call = viewer.invoke("inventory", {"n": n})
            call.wait(60)
            spec = viewer.spec("inventory")
        served = next(row for row in tools.history.rows() if row["tool"] == "inventory")
    finally:
        server.stop()
    assert call.state == "succeeded"
    # The receipt as served, but for where its artifact is kept (here, readable from here).
    kept = [Path(artifact.path) for artifact in call.envelope.artifacts]
    assert all(path.is_relative_to((tmp_path / "viewer").resolve()) for path in kept)
    assert unplaced(call.receipt or "") == unplaced(served["receipt"])
    here = EnvelopeInspector(call)
    there = EnvelopeInspector.from_row(
        served, spec=tools.spec("inventory"), resolve=tools.artifacts.resolve
    )
    assert [pane["key"] for pane in here.clients] == ["text_client", "structured_client"]
    # What the server's clients get; the text names the artifact where each side keeps it.
    assert unplaced(here.pane("text_client").text) == unplaced(there.pane("text_client").text)
    assert here.pane("structured_client").text == there.pane("structured_client").text
    whole = json.dumps(stock(n), ensure_ascii=False)
    assert json.loads(here.pane("structured_client").text) == json.loads(whole)
    # The connecting side's history row shows the same, from its own artifacts.
    row = row_of(viewer, call.id)
    again = EnvelopeInspector.from_row(row, spec=spec, resolve=viewer.artifacts.resolve)
    assert again.pane("structured_client").text == here.pane("structured_client").text
    html = here.static_html()
    assert "As each client sees it" in html and "<script>" not in html
    tools.history.close()
    viewer.history.close()
