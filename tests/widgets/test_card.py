"""The call card, driven through real calls on a real registry: badge per state, arguments and
coercions, coalesced and bounded output, Terminate, the result by family, static HTML."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import workbench as wb
from tests.conftest import wait_until
from tests.widgets.support import XSS, assert_escaped
from workbench.widgets import CallCard, FailureCard, card
from workbench.widgets._output import OutputPane
from workbench.widgets.call_card import displayed_card
from workbench.widgets.results import ResultView

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def state_of(view: CallCard) -> str:
    value = view.header.value
    return value.split("wb-state-")[1].split("'")[0]


@pytest.fixture
def gate(tools):
    """``hold`` runs until the test sets the event; ``chatter`` prints on both streams."""
    release = threading.Event()

    @tools.tool(timeout=None)
    async def hold(label: str = "x") -> str:
        while not release.is_set():
            await asyncio.sleep(0.01)
        return label

    yield release
    release.set()


def test_badge_follows_every_state(tools, gate):
    tools = wb.Registry(history=":memory:", max_concurrency=1, artifacts=tools.artifacts.root)

    @tools.tool(timeout=None)
    async def hold(n: int) -> int:
        while not gate.is_set():
            await asyncio.sleep(0.01)
        return n

    @tools.tool(permission="always_ask")
    def ask(n: int) -> int:
        return n

    @tools.tool
    def boom() -> None:
        raise RuntimeError("nope")

    first = card(tools.invoke("hold", {"n": 1}))
    assert wait_until(lambda: state_of(first) == "running")
    assert "running" in first.header.value
    queued = card(tools.invoke("hold", {"n": 2}))
    assert state_of(queued) == "queued"
    asking = card(tools.invoke("ask", {"n": 3}))
    assert wait_until(lambda: state_of(asking) == "awaiting_approval")
    assert ">awaiting approval<" in asking.header.value
    gate.set()
    first.call.wait(5)
    queued.call.wait(5)
    assert state_of(first) == state_of(queued) == "succeeded"
    asking.call.terminate()
    asking.call.wait(5)
    assert state_of(asking) == "terminated"
    failed = card(tools.invoke("boom"))
    failed.call.wait(5)
    assert state_of(failed) == "failed"
    tools.history.close()


def test_elapsed_ticks_while_running_and_freezes_at_the_end(tools, gate):
    view = card(tools.invoke("hold"))
    assert wait_until(lambda: "1 s<" in view.header.value, timeout=3)
    gate.set()
    view.call.wait(5)
    final = view.header.value
    assert f"{view.call.elapsed:.2f} s" in final
    time.sleep(0.3)
    assert view.header.value == final


def test_arguments_as_sent_as_coerced_and_each_coercion(tools):
    @tools.tool
    def add(a: int, b: int = 0) -> int:
        return a + b

    call = tools.invoke("add", {"a": "15", "b": "2"})
    view = card(call)
    call.wait(5)
    html = view.arguments.value
    # Collapsed to one line: the coerced arguments and a note of what the preflight changed.
    assert html.startswith("<details class='wb-args'><summary>")
    summary = html.split("</summary>")[0]
    assert "{&quot;a&quot;: 15, &quot;b&quot;: 2}" in summary
    assert "coerced: a: &quot;15&quot; → 15; b: &quot;2&quot; → 2" in summary
    # Expanded: as sent beside as coerced, and each coercion.
    assert "as sent" in html and "&quot;15&quot;" in html
    assert "as coerced" in html and "&quot;a&quot;: 15" in html
    for coercion in call.coercions:
        assert f"<li>{wb.widgets._html.esc(str(coercion))}</li>" in html


def test_arguments_accepted_unchanged_are_shown_once(tools):
    @tools.tool
    def add(a: int, b: int = 0) -> int:
        return a + b

    call = tools.invoke("add", {"a": 15})
    view = card(call)
    call.wait(5)
    html = view.arguments.value
    assert "coerced:" not in html and "as sent" not in html.replace("as sent, accepted", "")
    assert html.split("</summary>")[1].count("&quot;a&quot;: 15") == 1  # expanded: once
    assert "{&quot;a&quot;: 15}" in html.split("</summary>")[0]


def test_stdout_and_stderr_are_told_apart(tools):
    @tools.tool
    def chatter(ctx: wb.ToolContext) -> str:
        ctx.emit("to stdout\n")
        ctx.emit("to stderr\n", "stderr")
        return "done"

    view = card(tools.invoke("chatter"))
    view.call.wait(5)
    streams = [stream for stream, _ in view.output.segments]
    assert streams == ["stdout", "stderr"]
    assert view.output.layout.display is None
    html = view.static_html()
    assert "<span class='wb-stdout'>to stdout\n</span>" in html
    assert "<span class='wb-stderr'>to stderr\n</span>" in html


def test_output_is_coalesced_bounded_and_names_the_rest(tools):
    @tools.tool(timeout=None, streaming=True)
    def flood(lines: int):
        for i in range(lines):
            yield f"line {i}\n"
            if i % 50 == 0:
                time.sleep(0.001)  # spread the flood over about a second

    call = tools.invoke("flood", {"lines": 30_000})
    view = card(call)
    call.wait(30)
    elapsed = call.elapsed
    assert view.events_seen > 10_000
    assert elapsed > 0.3, "the flood should last long enough to need coalescing"
    # at most one redraw per flush interval, plus the final one
    assert view.updates_sent <= elapsed / view.flush_interval + 3, (view.updates_sent, elapsed)
    text = "".join(t for _, t in view.output.segments)
    assert text.count("\n") <= 200 and len(text) <= 20_000
    assert text.endswith("line 29999\n")
    shown = len(text.encode())
    assert view.output.note.startswith(
        f"… {call.output_size() - shown:,} more bytes in the artifact"
    )
    assert f"{call.output_size():,} bytes of output so far" in view.output.note


def test_a_card_made_late_starts_from_the_output_so_far(tools, gate):
    @tools.tool(timeout=None)
    async def early(ctx: wb.ToolContext) -> str:
        ctx.emit("before the card\n")
        while not gate.is_set():
            await asyncio.sleep(0.01)
        ctx.emit("after the card\n")
        return "ok"

    call = tools.invoke("early")
    assert wait_until(lambda: call.output_size() > 0)
    view = CallCard(call)
    gate.set()
    call.wait(5)
    assert "".join(t for _, t in view.output.segments) == "before the card\nafter the card\n"


def test_terminate_button_stops_the_call_and_is_disabled_after(tools, gate):
    view = card(tools.invoke("hold"))
    assert wait_until(lambda: view.call.state == "running")
    assert "wb-terminate" in view.terminate_button._dom_classes
    assert view.terminate_button.description == "Terminate"
    assert not view.terminate_button.disabled
    view.terminate_button.click()
    envelope = view.call.wait(5)
    assert envelope.killed_by == "user"
    assert view.terminate_button.disabled
    assert state_of(view) == "terminated"
    assert isinstance(view.result_widget, FailureCard)
    assert "killed_by" in view.static_html() and "&quot;user&quot;" in view.static_html()


def test_terminate_is_enabled_while_queued_and_awaiting_approval(tools):
    @tools.tool(permission="always_ask")
    def ask() -> str:
        return "ran"

    view = card(tools.invoke("ask"))
    assert not view.terminate_button.disabled
    assert wait_until(lambda: view.call.state == "awaiting_approval")
    view.terminate_button.click()
    assert view.call.wait(5).killed_by == "user"
    assert view.terminate_button.disabled


def test_a_tool_that_blocks_interrupts_has_terminate_disabled(tools, gate):
    @tools.tool(interrupt="block", timeout=None)
    async def atomic() -> str:
        while not gate.is_set():
            await asyncio.sleep(0.01)
        return "ok"

    view = card(tools.invoke("atomic"))
    assert wait_until(lambda: view.call.state == "running")
    assert wait_until(lambda: view.terminate_button.disabled)
    assert "interrupt='block'" in view.terminate_button.tooltip
    gate.set()
    view.call.wait(5)


def test_the_end_shows_the_result_by_family_and_the_receipt(tools):
    @tools.tool(family="text")
    def note() -> str:
        return "**bold** words"

    view = card(tools.invoke("note"))
    view.call.wait(5)
    result, receipt = view.result.children
    assert isinstance(result, ResultView)
    assert "<strong>bold</strong>" in result.body.value
    assert "receipt · 14 chars" in receipt.value
    assert "**bold** words" in receipt.value
    assert "<details class='wb-receipt'>" in receipt.value  # collapsible, closed


@pytest.mark.parametrize("timeout", [None, 5.0], ids=["no-timeout", "timeout"])
def test_a_card_is_final_when_wait_returns_while_the_loop_is_busy(tools, timeout):
    """A card made after its call started in a lane hears of the end on the runtime loop; a
    busy loop must not let wait() return first (a fresh clone's run once found the result box
    still empty)."""
    release = threading.Event()

    @tools.tool(family="text", timeout=None)
    def note() -> str:
        release.wait(10)
        return "words"

    call = tools.invoke("note")
    assert wait_until(lambda: call.state == "running")  # the ticker handed it to a lane
    view = card(call)
    busy = threading.Event()
    call.sheet.loop.call_soon_threadsafe(lambda: (busy.set(), time.sleep(0.3)))
    assert busy.wait(5)
    release.set()
    call.wait(timeout)
    assert len(view.result.children) == 2
    assert state_of(view) == "succeeded"


def test_a_card_of_a_finished_call_is_final_at_once(tools):
    @tools.tool
    def one() -> int:
        return 1

    call = tools.invoke("one")
    call.wait(5)
    view = CallCard(call)
    assert state_of(view) == "succeeded"
    assert view.terminate_button.disabled
    assert len(view.result.children) == 2


def test_one_card_per_call(tools):
    @tools.tool
    def one() -> int:
        return 1

    call = tools.invoke("one")
    assert card(call) is card(call)
    call.wait(5)


def panes_made_by(make) -> list[OutputPane]:
    """The output panes ``make()`` created (each one a front-end module for the page to load)."""
    from ipywidgets.widgets.widget import _instances

    before = set(_instances)
    make()
    return [w for k, w in _instances.items() if k not in before and isinstance(w, OutputPane)]


def add_chatter(tools) -> None:
    """Register ``chatter``, a tool that writes one line to stdout."""

    @tools.tool
    def chatter(ctx: wb.ToolContext) -> str:
        ctx.emit("to stdout\n")
        return "done"


def test_a_card_has_an_output_pane_only_where_output_can_be(tools, gate):
    add_chatter(tools)

    @tools.tool
    def quiet() -> str:
        return "done"

    # A call that ended with no output: no pane, so the page loads no pane module for it.
    silent = tools.invoke("quiet")
    silent.wait(5)
    made: list[CallCard] = []
    assert panes_made_by(lambda: made.append(CallCard(silent))) == []
    view = made[0]
    assert view.static_html().count("wb-output-pane") == 0
    # Asked for, the pane is made, empty and hidden, between Terminate and the result.
    (pane,) = panes_made_by(lambda: view.output)
    assert pane.segments == [] and pane.layout.display == "none"
    children = list(view.children)
    assert children.index(view.terminate_button) + 1 == children.index(pane)
    assert children.index(pane) + 1 == children.index(view.result)
    assert view.output is pane
    # A call that ended with output: its card (in a box, say) shows it in its pane.
    printed = tools.invoke("chatter")
    printed.wait(5)
    (pane,) = panes_made_by(lambda: made.append(CallCard(printed)))
    assert made[-1].output is pane and pane in made[-1].children
    assert pane.segments == [("stdout", "to stdout\n")] and pane.layout.display is None
    # A live card makes its pane when its first output arrives.
    live: list[CallCard] = []
    assert panes_made_by(lambda: live.append(CallCard(tools.invoke("hold")))) == []
    gate.set()
    live[0].call.wait(5)
    running = tools.invoke("chatter")
    (pane,) = panes_made_by(lambda: (live.append(CallCard(running)), running.wait(5)))
    assert live[-1].output is pane


def test_a_settled_card_a_call_displays_makes_no_pane_and_no_result_widgets_until_used(tools):
    add_chatter(tools)
    call = tools.invoke("chatter")
    call.wait(5)
    shown: list[CallCard] = []
    assert panes_made_by(lambda: shown.append(displayed_card(call))) == []
    view = shown[0]
    assert view.settled and view.result.children == ()
    assert "to stdout" in view.static_html()  # the HTML it is shown as has the output
    # Used as a widget (in a box, say), the same card is made whole.
    (pane,) = panes_made_by(lambda: card(call))
    assert card(call) is view and view.output is pane and len(view.result.children) == 2
    assert pane.segments == [("stdout", "to stdout\n")]


def test_static_html_is_in_the_mimebundle_with_the_widget_view(tools):
    release = threading.Event()

    @tools.tool
    def one(ctx: wb.ToolContext) -> int:
        ctx.emit("working\n")
        release.wait(5)
        return 1

    call = tools.invoke("one")
    view = card(call)
    bundle = view._repr_mimebundle_()
    assert WIDGET_VIEW in bundle  # live while the call runs
    release.set()
    call.wait(5)
    assert wait_until(lambda: view.settled)
    # Ended with nothing left to click: HTML alone, so a notebook reopened with no kernel
    # shows the card rather than "model not found".
    bundle = view._repr_mimebundle_()
    assert WIDGET_VIEW not in bundle
    html = bundle["text/html"]
    assert html.startswith("<style>") and ".wb-card" in html
    assert "<div class='wb-card wb-static'>" in html
    assert "succeeded" in html and "receipt" in html
    assert "wb-card" in view._dom_classes
    assert isinstance(view.output, OutputPane)


def test_tool_text_is_escaped_everywhere_in_the_card(tools):
    @tools.tool
    def evil(text: str, ctx: wb.ToolContext) -> dict:
        ctx.emit(text)
        ctx.emit(text, "stderr")
        return {text: text}

    call = tools.invoke("evil", {"text": XSS})
    view = card(call)
    call.wait(5)
    assert_escaped(view.static_html())
    assert_escaped(view.arguments.value)
    assert_escaped(view.result_widget.static_html())
    # the live pane carries plain text; its JavaScript draws it with textContent
    assert any(XSS in text for _, text in view.output.segments)


def test_arguments_edited_while_approving_are_labelled_edited_by_you_beside_as_sent(tools):
    @tools.tool(permission="always_ask")
    def write(name: str, text: str) -> str:
        return f"{name}: {text}"

    view = card(tools.invoke("write", {"name": "a.txt", "text": "first"}))
    assert wait_until(lambda: view.call.pending_action == "approval")
    view.call.modify({"name": "b.txt", "text": "edited"})
    view.call.wait(5)
    html = view.static_html()
    arguments = html.split("<details class='wb-args'>")[1].split("</details>")[0]
    summary, body = arguments.split("</summary>")
    assert "edited by you" in summary
    assert "as coerced" not in body  # nothing was coerced: the model's arguments were valid
    assert "as sent" in body and "a.txt" in body.split("edited by you")[0]
    assert "edited by you" in body and "b.txt" in body.split("edited by you")[1]


def test_a_tools_progress_is_a_bar_with_its_message_live_and_after(tools):
    release = threading.Event()

    @tools.tool(timeout=None)
    def steps(ctx: wb.ToolContext) -> str:
        ctx.progress(1, 4, "reading <input>")
        release.wait(10)
        ctx.progress(4, 4, "done")
        return "ok"

    call = tools.invoke("steps")
    view = card(call)
    try:
        assert wait_until(lambda: "1/4 (25%)" in view.progress_bar.value)
        live = view.progress_bar.value
        assert "<progress class='wb-progress-bar' value='1' max='4'>" in live
        assert "reading &lt;input&gt;" in live and "<input>" not in live  # escaped
    finally:
        release.set()
    call.wait(10)
    html = view.static_html()
    assert "value='4' max='4'" in html and "4/4 (100%)" in html and ">done</span>" in html
    row = tools.history.get(call.id)
    assert row is not None
    reports = [e for e in row["events"] if e["type"] == "tool.progress"]
    kept = [(e["done"], e["total"], e["message"]) for e in reports]
    assert kept == [(1, 4, "reading <input>"), (4, 4, "done")]


def test_progress_without_a_total_counts_and_bad_values_are_refused(tools):
    @tools.tool
    def counting(ctx: wb.ToolContext) -> list[str]:
        ctx.progress(7, message="files")
        refused = []
        for done, total in ((float("nan"), None), (1, 0), (True, None), (1, -2)):
            try:
                ctx.progress(done, total)
            except ValueError as exc:
                refused.append(str(exc))
        return refused

    call = tools.invoke("counting")
    refused = call.wait(10).result
    assert len(refused) == 4 and "finite number" in refused[0] and "positive" in refused[1]
    html = card(call).static_html()
    assert "<progress class='wb-progress-bar'></progress>" in html and ">7</span>" in html


def test_a_flood_of_progress_keeps_bounded_events_ending_with_the_latest(tools):
    from workbench.runtime._event_log import PROGRESS_EVENTS_KEPT

    @tools.tool
    def flood(ctx: wb.ToolContext) -> str:
        for done in range(1, 5_001):
            ctx.progress(done, 5_000)
        return "ok"

    call = tools.invoke("flood")
    call.wait(30)
    kept = [e.data["done"] for e in call.events if e.type == "tool.progress"]
    assert len(kept) == PROGRESS_EVENTS_KEPT and kept[0] == 1 and kept[-1] == 5_000
    assert call.events[-1].type == "tool.completed"  # the terminal event stays last
    assert "5000/5000 (100%)" in card(call).static_html()
