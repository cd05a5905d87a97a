"""A resource read is a call: a big resource of an SDK server (a process over stdio) gets the
receipt budget a tool's result gets, head and tail, the whole kept as the artifact the receipt
names, which ``artifact_read`` pages; a cell ending in ``conn.read(big)`` sends the browser a
bounded card, escaped; the read is in the history; and a read that fails is an envelope."""

from __future__ import annotations

import html
from collections.abc import Iterator
from pathlib import Path

import pytest

import workbench as wb
from tests.mcp import sdk_servers
from workbench import mcp as wbmcp

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[wb.Registry, wbmcp.Connection]]:
    root = tmp_path_factory.mktemp("reading")
    tools = wb.Registry(history=root / "history.sqlite", artifacts=root / "artifacts")
    wb.builtins.register(tools, root=root)
    conn = wbmcp.connect(sdk_servers.command("big"), tools=tools, cwd=REPO)
    yield tools, conn
    conn.close()
    tools.history.close()


def test_a_big_resource_reads_within_the_receipt_budget(big):
    tools, conn = big
    read = conn.read("big://text")
    # What a cell ending in conn.read(...) sends to the browser: bounded, whatever the size.
    sent = sum(len(value.encode()) for value in read._repr_mimebundle_().values())
    assert sent < 2 * tools.budgets.receipt_chars, sent
    assert read.ok and read.result["truncated"]
    whole = Path(read.artifacts[read.result["text_artifact"]].path).read_text()
    assert len(whole) >= sdk_servers.BIG_CHARS - 20 and whole.startswith("[resource big://text]")
    assert read.result["chars"] == len(whole)
    shown = read._repr_mimebundle_()["text/html"]
    assert "<b>row</b>" not in shown and html.escape("<b>row</b>") in shown


def test_the_receipt_names_the_artifact_and_artifact_read_pages_it(big):
    tools, conn = big
    call = conn.reads.invoke("mcp_read_resource", {"uri": "big://text"})
    call.wait(120)
    receipt = call.receipt or ""
    path = call.envelope.artifacts[call.envelope.result["text_artifact"]].path
    assert path in receipt and len(receipt) < tools.budgets.receipt_chars
    page = tools.invoke("artifact_read", {"path": path, "offset": 100_000, "limit": 2}).wait(60)
    assert page.ok and page.result["text"] == "<b>row</b> & more\n" * 2
    row = tools.history.get(call.id)  # the read is a call of the connection's history
    assert row is not None and row["tool"] == "mcp_read_resource" and row["truncated"]


def test_a_read_that_fails_is_an_envelope_not_a_traceback(big):
    _, conn = big
    missing = conn.read("big://nothing")
    assert not missing.ok and "big://nothing" in missing.error.message
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        conn.read("big://text", timeout=0)
