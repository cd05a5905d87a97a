"""The envelope inspector, kernel-free: panes, counts, marks and escaping, from real calls."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

import workbench as wb
from workbench.envelope._truncate import MARKER_RE
from workbench.tokens import count_tokens
from workbench.widgets import EnvelopeInspector
from workbench.widgets._panes import highlight, segments_html

XSS = "<img src=x onerror=alert(1)><script>alert(2)</script>"


@pytest.fixture
def printer(tools: wb.Registry) -> wb.Tool:
    @tools.tool(family="command")
    def print_lines(n: int, text: str = "line") -> dict:
        """Print ``n`` numbered lines, like a chatty command."""
        return {"exit_code": 0, "stdout": "".join(f"{text} {i}\n" for i in range(n))}

    return print_lines


def run(tools: wb.Registry, name: str, args: dict) -> wb.Call:
    call = tools.invoke(name, args)
    call.wait(10)
    return call


def marked(inspector: EnvelopeInspector, key: str, kind: str) -> list[str]:
    pane = next(p for p in inspector.panes if p["key"] == key)
    return [text for text, mark in pane["segments"] if mark == kind]


def test_three_panes_show_the_call_exactly_with_character_counts(tools, printer):
    call = run(tools, "print_lines", {"n": "3"})
    inspector = EnvelopeInspector(call)

    assert [p["key"] for p in inspector.panes] == ["canonical", "wire", "receipt"]
    canonical, wire, receipt = (inspector.pane(k) for k in ("canonical", "wire", "receipt"))
    assert json.loads(canonical.text) == call.envelope.canonical()
    assert wire.text == call.wire and receipt.text == call.receipt
    compact = json.dumps(call.envelope.canonical(), ensure_ascii=False)
    tokens = count_tokens  # by default, OpenAI's cl100k_base
    assert inspector.counts == {
        "canonical": {"chars": len(compact), "tokens": tokens(compact).tokens},
        "wire": {"chars": len(call.wire), "tokens": tokens(call.wire).tokens},
        "receipt": {"chars": len(call.receipt), "tokens": tokens(call.receipt).tokens},
    }
    uncounted = EnvelopeInspector(call, count=None).counts
    assert {key: count["tokens"] for key, count in uncounted.items()} == dict.fromkeys(
        ("canonical", "wire", "receipt")
    )
    for pane in inspector.panes:  # the segments are the text, losslessly
        assert "".join(text for text, _ in pane["segments"]) == inspector.pane(pane["key"]).text
        assert pane["label"].startswith(f"{pane['chars']:,} chars")
    assert inspector.header["tool_name"] == "print_lines"
    assert inspector.header["call_id"] == call.id
    assert "wb-inspector" in inspector._dom_classes


def test_a_counter_function_adds_token_counts(tools, printer):
    call = run(tools, "print_lines", {"n": 4})

    def words(text: str) -> int:
        return len(text.split())

    inspector = EnvelopeInspector(call, count=words)
    assert inspector.counts["receipt"]["tokens"] == len(call.receipt.split())
    assert inspector.counts["wire"]["tokens"] == len(call.wire.split())
    assert f"{len(call.receipt.split())} tokens" in inspector.pane("receipt").label()
    assert EnvelopeInspector(call, count=len).counts["wire"]["tokens"] == len(call.wire)


def test_cut_markers_and_artifact_references_are_marked_in_every_pane(tools, printer):
    call = run(tools, "print_lines", {"n": 5000})
    [artifact] = call.envelope.artifacts
    assert MARKER_RE.search(call.receipt), "the receipt should be cut"

    inspector = EnvelopeInspector(call)

    [receipt_marker] = marked(inspector, "receipt", "truncation")
    assert MARKER_RE.fullmatch(receipt_marker)
    assert marked(inspector, "receipt", "artifact") == [artifact.path]
    assert marked(inspector, "canonical", "truncation") == [receipt_marker]
    assert '"stdout_artifact": 0' in marked(inspector, "canonical", "artifact")
    assert artifact.path in marked(inspector, "canonical", "artifact")
    assert marked(inspector, "wire", "truncation") == [receipt_marker]
    assert marked(inspector, "wire", "artifact") == ['"stdout_artifact": 0']
    receipt = next(p for p in inspector.panes if p["key"] == "receipt")
    assert receipt["marks"] == {"truncation": 1, "artifact": 1}
    assert "1 cut marker · 1 artifact ref" in receipt["label"]


def test_marks_wrap_text_that_was_escaped_first(tools, printer):
    call = run(tools, "print_lines", {"n": 5000, "text": XSS})
    inspector = EnvelopeInspector(call)
    html = inspector.to_html()

    assert "<img" not in html and "<script>" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    marker = marked(inspector, "receipt", "truncation")[0]
    assert f"<mark class='wb-mark wb-mark-truncation'>{marker}</mark>" in html
    for pane in inspector.panes:  # the payload reaches the browser as plain text segments
        assert any(XSS in text for text, kind in pane["segments"] if kind is None)


def test_highlight_splits_text_and_the_first_overlapping_match_wins():
    patterns = [(re.compile(r"ab"), "artifact"), (re.compile(r"bc"), "truncation")]
    assert highlight("xabcx", patterns) == (("x", None), ("ab", "artifact"), ("cx", None))
    assert highlight("", patterns) == (("", None),)
    assert segments_html([("<b>", None), ("&", "artifact")]) == (
        "&lt;b&gt;<mark class='wb-mark wb-mark-artifact'>&amp;</mark>"
    )


def test_a_failure_shows_its_kind_and_the_wire_failure_shape(tools, printer):
    call = run(tools, "print_lines", {"n": "many"})
    inspector = EnvelopeInspector(call)

    assert inspector.header["status"] == "error"
    assert inspector.header["kind"] == "invalid_args"
    assert json.loads(inspector.pane("wire").text)["ok"] is False
    assert inspector.pane("receipt").text == call.receipt


def test_an_envelope_is_rendered_by_its_family(tools):
    envelope = wb.success("greet", text=f"hello {XSS}")
    inspector = EnvelopeInspector(envelope)

    assert inspector.receipt == wb.families.render(envelope)
    assert XSS in inspector.receipt
    assert "<script>" not in inspector.to_html()
    given = EnvelopeInspector(envelope, receipt="what the model read")
    assert given.pane("receipt").text == "what the model read"


def test_a_running_call_fills_the_panes_when_it_ends(tools):
    release = asyncio.Event()

    @tools.tool
    async def slow() -> str:
        """Wait until released."""
        await release.wait()
        return "done"

    call = tools.invoke("slow")
    inspector = EnvelopeInspector(call)
    assert inspector.panes == [] and "waiting for it to end" in inspector.note

    call.sheet.loop.call_soon_threadsafe(release.set)
    call.wait(10)
    assert inspector.note == ""
    assert inspector.pane("receipt").text == "done"
    assert inspector.envelope == call.envelope


def test_a_history_row_is_inspected_with_its_recorded_receipt(tools, printer):
    call = run(tools, "print_lines", {"n": 2})
    row = tools.history.get(call.id)

    inspector = EnvelopeInspector.from_row(row)
    assert inspector.envelope == call.envelope
    assert inspector.receipt == row["receipt"] == call.receipt

    # The row is the record: its receipt is shown even where rendering now would differ.
    edited = {**row, "receipt": "receipt as recorded"}
    assert EnvelopeInspector.from_row(edited).receipt == "receipt as recorded"
    empty = EnvelopeInspector.from_row({"call_id": "call_x", "canonical": None})
    assert empty.panes == [] and "no canonical record" in empty.note


def test_the_mime_bundle_has_the_widget_view_and_the_static_html(tools, printer):
    call = run(tools, "print_lines", {"n": 2})
    data, _metadata = EnvelopeInspector(call)._repr_mimebundle_()

    assert "application/vnd.jupyter.widget-view+json" in data
    assert "class='wb-inspector wb-static'" in data["text/html"]
    assert data["text/html"].count("<section class='wb-inspector-pane") == 3
