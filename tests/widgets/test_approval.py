"""The approval prompt of always_ask calls: effects, flags and the exact arguments; Allow runs
the call, Deny ends it user_denied. A card shows the prompt only while the call waits."""

from __future__ import annotations

import pytest

from tests.conftest import wait_until
from tests.widgets.support import XSS, assert_escaped
from workbench.widgets import ApprovalPrompt, FailureCard, card


@pytest.fixture
def writer(tools, tmp_path):
    target = tmp_path / "written.txt"

    @tools.tool(permission="always_ask", effects=["writes written.txt"], destructive=True)
    def write_note(text: str, times: int = 1) -> str:
        """Write a note to disk."""
        target.write_text(text * times)
        return "written"

    return target


def waiting(tools, args):
    view = card(tools.invoke("write_note", args))
    assert wait_until(lambda: view.prompt.children != ())
    (prompt,) = view.prompt.children
    assert isinstance(prompt, ApprovalPrompt)
    return view, prompt


def test_the_prompt_shows_effects_flags_and_exact_arguments(tools, writer):
    view, prompt = waiting(tools, {"text": "hi", "times": "2"})
    assert "wb-approval" in prompt._dom_classes
    assert prompt.allow_button.description == "Allow"
    assert prompt.deny_button.description == "Deny"
    html = prompt.info.value
    assert "<li>writes written.txt</li>" in html
    assert "wb-flag-destructive" in html and "destructive" in html
    # Inside a card the arguments are the card's (shown once); a prompt alone shows them.
    assert "&quot;times&quot;" not in html
    assert "&quot;times&quot;: 2" in view.arguments.value  # coerced: what the tool receives
    alone = ApprovalPrompt(view.call)
    assert "&quot;times&quot;: 2" in alone.info.value
    view.call.terminate()
    view.call.wait(5)


def test_allow_runs_the_call_and_the_prompt_goes(tools, writer):
    view, prompt = waiting(tools, {"text": "hi"})
    assert not writer.exists()
    prompt.allow_button.click()
    assert prompt.allow_button.disabled and prompt.deny_button.disabled
    assert view.call.wait(5).ok
    assert writer.read_text() == "hi"
    assert view.prompt.children == ()
    assert "succeeded" in view.header.value


def test_deny_ends_user_denied_with_the_reason(tools, writer):
    view, prompt = waiting(tools, {"text": "hi"})
    prompt.reason.value = "not on a Friday"
    prompt.deny_button.click()
    envelope = view.call.wait(5)
    assert envelope.error.kind == "user_denied"
    assert "not on a Friday" in envelope.error.message
    assert not writer.exists()
    assert isinstance(view.result_widget, FailureCard)
    assert "user_denied" in view.result_widget.body.value
    assert view.prompt.children == ()


def test_arguments_in_the_prompt_are_escaped(tools, writer):
    view, prompt = waiting(tools, {"text": XSS})
    alone = ApprovalPrompt(view.call)
    assert_escaped(alone.info.value)
    assert_escaped(alone._repr_mimebundle_()["text/html"])
    assert_escaped(view.static_html())
    prompt.deny()
    view.call.wait(5)


def test_an_approved_call_keeps_the_mark_after_it_ends(tools, writer):
    view, prompt = waiting(tools, {"text": "hi"})
    assert "wb-approved" not in view.header.value
    prompt.allow()
    view.call.wait(5)
    assert wait_until(lambda: "succeeded" in view.header.value)
    assert "approved by you" in view.header.value and "wb-approved" in view.static_html()


def test_allow_edited_modifies_the_arguments_and_a_refusal_keeps_the_call_waiting(tools, writer):
    view, prompt = waiting(tools, {"text": "hi"})
    prompt.edit()
    assert prompt.editor.layout.display is None and '"text": "hi"' in prompt.editor.value
    prompt.editor.value = '{"txt": "nope"}'
    prompt.allow_edited()
    assert "not sent" in prompt.decision.value and not prompt.allow_button.disabled
    prompt.editor.value = "{not json"
    prompt.allow_edited()
    assert "not sent" in prompt.decision.value
    assert view.call.state == "awaiting_approval"
    prompt.editor.value = '{"text": "edited", "times": 2}'
    prompt.allow_edited()
    assert view.call.wait(5).ok and writer.read_text() == "editededited"
    assert view.call.modifications[0]["to"] == {"text": "edited", "times": 2}
    assert prompt.modify_button.disabled


def test_the_prompt_binds_its_decision_to_the_arguments_it_showed(tools, writer):
    view, prompt = waiting(tools, {"text": "hi"})
    assert prompt.binding == view.call.gate.request.binding
    prompt.binding = "0" * 16  # as if the prompt had shown other arguments
    prompt.allow()
    assert wait_until(lambda: any("no longer applies" in w for w in view.call.warnings))
    assert view.call.state == "awaiting_approval"
    view.call.approve()
    assert view.call.wait(5).ok


def test_a_card_shows_the_runtimes_notes_escaped(tools):
    @tools.tool
    def quiet() -> str:
        """Nothing."""
        return "ok"

    call = tools.invoke("quiet")
    call.wait(5)
    call.warn(f"runtime note {XSS}")
    view = card(call)
    assert "runtime note" in view.static_html()
    assert_escaped(view.static_html())
