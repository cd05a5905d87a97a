"""The run card over a real run (OpenAI SDK → scripted server): a call card per call, the
receipt boxes of step mode whose edits Step sends, Stop, escaped text, a static final form."""

from __future__ import annotations

import pytest

import workbench as wb
from tests.conftest import wait_until
from tests.models.support import add_note_tools
from tests.models.test_run import chat
from tests.widgets.support import XSS, assert_escaped
from workbench.models.local_server import ScriptedServer
from workbench.widgets import CallCard, RunCard


@pytest.fixture
def server():
    started = ScriptedServer().start()
    yield started
    started.stop()


def test_step_edits_the_receipt_in_its_box_and_sends_it(tools, server):
    add_note_tools(tools)
    server.add(
        "openai_chat",
        chat("c1", f"checking {XSS}", ("call_1", "read_note", '{"name": "budget.txt"}')),
        chat("c2", "ok"),
    )
    run = wb.run("openai:m", tools, "budget?", base_url=server.openai_base_url, step=True)
    view = RunCard(run)
    run.wait(timeout=10)
    assert wait_until(lambda: view.step_button.disabled is False, timeout=5)
    view.step_button.click()
    run.wait(timeout=30)
    assert wait_until(lambda: len(view.editors) == 1, timeout=5)
    (call,) = run.calls
    cards = [child for child in view.body.children if isinstance(child, CallCard)]
    assert [card.call for card in cards] == [call]
    assert_escaped(view.body.children[0].value)  # the model's text is escaped
    editor = view.editors[call.id]
    assert editor.value == call.receipt and "wb-run-receipt" in editor._dom_classes
    editor.value = "budget: 1 (edited in the card)"
    view.step_button.click()
    run.wait(timeout=30)
    assert run.end_reason == "answered", run.error
    sent = [m for m in server.requests[1].body["messages"] if m.get("role") == "tool"]
    assert sent[0]["content"] == "budget: 1 (edited in the card)"
    assert run.edits[0].after == "budget: 1 (edited in the card)"
    assert wait_until(lambda: view._final, timeout=5)
    bundle = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" not in bundle  # saved as HTML alone
    html = bundle["text/html"]
    assert "wb-run" in html and "wb-card" in html and "edited before it was sent" in html
    assert_escaped(html)
    assert "wb-state-running'" not in html.split("</style>")[-1]


def test_stop_button_stops_the_run(tools, server):
    import threading

    release = threading.Event()
    add_note_tools(tools, release=release)
    server.add("openai_chat", chat("c1", None, ("call_1", "slow_count", '{"name": "x"}')))
    run = wb.run("openai:m", tools, "count", base_url=server.openai_base_url)
    view = RunCard(run)
    assert wait_until(lambda: run.calls and run.calls[0].state == "running", timeout=20)
    view.stop_button.click()
    run.wait(timeout=30)
    assert run.state == "stopped" and run.calls[0].state == "terminated"
    assert wait_until(lambda: view.stop_button.layout.display == "none", timeout=5)
