"""The custom-tool form: the person types the result (fields from a simple output schema, or
JSON) or a failure; it is checked against the output schema before it is sent."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from tests.conftest import wait_until
from workbench.widgets import CustomToolForm, card


class Answer(BaseModel):
    answer: str
    confidence: float


@pytest.fixture
def ask_person(tools):
    @tools.tool(ownership="custom")
    def ask_person(question: str) -> Answer:
        """Ask the person at the keyboard."""
        raise AssertionError("a custom tool has no body in the kernel")

    @tools.tool(ownership="custom", output_schema={"type": "array", "items": {"type": "string"}})
    def free_form(question: str) -> list:
        """Anything goes."""
        raise AssertionError("custom")


def form_for(tools, name):
    view = card(tools.invoke(name, {"question": "Which colour?"}))
    assert wait_until(lambda: view.prompt.children != ())
    (form,) = view.prompt.children
    assert isinstance(form, CustomToolForm)
    return view, form


def test_fields_from_a_simple_schema_fulfil_the_call(tools, ask_person):
    view, form = form_for(tools, "ask_person")
    assert "wb-custom" in form._dom_classes
    assert sorted(form.fields) == ["answer", "confidence"]
    form.fields["answer"].value = "teal"
    form.fields["confidence"].value = 0.9
    form.submit_button.click()
    envelope = view.call.wait(5)
    assert envelope.ok and envelope.result == {"answer": "teal", "confidence": 0.9}
    assert view.prompt.children == ()


def test_json_for_a_schema_that_is_not_simple(tools, ask_person):
    view, form = form_for(tools, "free_form")
    assert form.fields == {}
    form.result_text.value = "[1, 2"
    assert not form.submit()
    assert "not JSON" in form.problem.value
    form.result_text.value = '{"not": "a list"}'
    assert not form.submit()
    assert "does not match the output schema" in form.problem.value
    assert not view.call.done
    form.result_text.value = '["red", "teal"]'
    assert form.submit()
    assert view.call.wait(5).result == ["red", "teal"]


def test_a_failure_with_a_kind_and_a_message(tools, ask_person):
    view, form = form_for(tools, "ask_person")
    form.mode.value = "failure"
    assert form.result_box.layout.display == "none" and form.failure_box.layout.display is None
    assert not form.submit()  # no message yet
    form.kind.value = "unavailable"
    form.message.value = "the person stepped away"
    form.submit_button.click()
    envelope = view.call.wait(5)
    assert envelope.error.kind == "unavailable"
    assert envelope.error.message == "the person stepped away"
    assert "wb-custom" in form._repr_mimebundle_()["text/html"]


def test_a_call_waiting_for_the_person_says_so_and_keeps_a_fulfilled_mark(tools, ask_person):
    view, form = form_for(tools, "ask_person")
    header = view.header.value
    assert "waiting for you" in header and ">running<" not in header
    form.fields["answer"].value = "teal"
    form.submit_button.click()
    view.call.wait(5)
    assert wait_until(lambda: "fulfilled by you" in view.static_html())
    assert "wb-fulfilled" in view.header.value and "waiting for you" not in view.header.value


def test_a_text_tools_reply_is_the_plain_text_typed(tools):
    # A sampling card is a text custom tool: "Tides follow the moon." was refused as not JSON.
    tools.register(
        None,
        name="reply",
        description="The person writes the reply.",
        input_schema={"type": "object", "properties": {"question": {"type": "string"}}},
        ownership="custom",
        family="text",
    )
    view, form = form_for(tools, "reply")
    assert "plain text" in form.result_text.placeholder
    form.result_text.value = "Tides follow the moon."
    assert form.submit(), form.problem.value
    assert view.call.wait(5).result == {"text": "Tides follow the moon."}
    view, form = form_for(tools, "reply")
    form.result_text.value = "42"  # text, not a number
    assert form.submit()
    assert view.call.wait(5).result == {"text": "42"}


def test_plain_text_is_the_result_of_a_tool_with_no_output_schema(tools):
    @tools.tool(ownership="custom")
    def ask(question: str):
        """Ask the person."""
        raise AssertionError("custom")

    view, form = form_for(tools, "ask")
    form.result_text.value = "teal, I think"
    assert form.submit(), form.problem.value
    assert view.call.wait(5).result == "teal, I think"
    view, form = form_for(tools, "ask")
    form.result_text.value = '{"colour": "teal"}'
    assert form.submit()
    assert view.call.wait(5).result == {"colour": "teal"}
