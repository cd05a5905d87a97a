"""Approval for always_ask tools, run-time policies, and custom tools fulfilled by a person."""

from __future__ import annotations

import time

import pytest
from pydantic import BaseModel

import workbench as wb
from tests.conftest import wait_until


@pytest.fixture
def writer(tools, tmp_path):
    target = tmp_path / "written.txt"

    @tools.tool(permission="always_ask", effects=["writes a file"], destructive=True)
    def write_note(text: str) -> str:
        """Write a note to disk."""
        target.write_text(text)
        return "written"

    return target


def test_always_ask_pauses_before_any_side_effect_and_allow_runs_it(tools, writer):
    call = tools.invoke("write_note", {"text": "hello"})
    assert wait_until(lambda: call.state == "awaiting_approval")
    assert call.pending_action == "approval"
    time.sleep(0.1)
    assert not writer.exists()  # nothing happened before approval
    call.approve()
    envelope = call.wait(5)
    assert envelope.ok and writer.read_text() == "hello"
    types = [e.type for e in call.events]
    assert types == [
        "tool.queued",
        "tool.approval_requested",
        "tool.approved",
        "tool.started",
        "tool.completed",
    ]
    requested = call.events[1]
    assert requested.data["arguments"] == {"text": "hello"}
    assert requested.data["effects"] == ["writes a file"]


def test_deny_ends_user_denied_not_retryable_and_nothing_is_written(tools, writer):
    call = tools.invoke("write_note", {"text": "hello"})
    assert wait_until(lambda: call.state == "awaiting_approval")
    call.deny("not today")
    envelope = call.wait(5)
    assert envelope.error.kind == "user_denied"
    assert envelope.error.retryable is False
    assert "not today" in envelope.error.message
    assert not writer.exists()
    assert [e.type for e in call.events][-2:] == ["tool.denied", "tool.failed"]
    assert tools.history.get(call.id)["denied"] is True


def test_terminate_while_awaiting_approval_ends_terminated_without_side_effects(tools, writer):
    call = tools.invoke("write_note", {"text": "x"})
    assert wait_until(lambda: call.state == "awaiting_approval")
    call.terminate()
    assert call.wait(5).killed_by == "user"
    assert not writer.exists()


def test_policies_change_per_registry_at_run_time(tools, writer):
    tools.set_permission("write_note", "always_allow")
    assert tools.invoke("write_note", {"text": "a"}).wait(5).ok
    tools.set_permission("write_note", "always_deny")
    refused = tools.invoke("write_note", {"text": "b"}).wait(5)
    assert refused.error.kind == "rejected" and refused.error.retryable is False
    assert writer.read_text() == "a"
    tools.set_permission("write_note", None)
    assert tools.permission("write_note") == "always_ask"
    with pytest.raises(ValueError, match="permission must be one of"):
        tools.set_permission("write_note", "sometimes")


def test_approve_on_a_call_not_waiting_is_harmless(tools):
    @tools.tool
    def quick() -> int:
        """Return."""
        return 1

    call = tools.invoke("quick")
    call.approve()
    call.deny()
    assert call.wait(5).result == 1


class Answer(BaseModel):
    answer: str
    confidence: float


@pytest.fixture
def ask_person(tools):
    @tools.tool(ownership="custom")
    def ask_person(question: str) -> Answer:
        """Ask the person at the keyboard; they type the answer."""
        raise AssertionError("a custom tool has no body in the kernel")

    return ask_person


def test_custom_tool_waits_for_the_person_and_accepts_a_valid_result(tools, ask_person):
    call = tools.invoke("ask_person", {"question": "Which colour?"})
    assert wait_until(lambda: call.pending_action == "result")
    assert call.state == "running"
    call.fulfil({"answer": "teal", "confidence": 0.9})
    envelope = call.wait(5)
    assert envelope.ok and envelope.result == {"answer": "teal", "confidence": 0.9}
    assert "tool.input_requested" in [e.type for e in call.events]


def test_custom_tool_result_is_checked_against_the_output_schema(tools, ask_person):
    call = tools.invoke("ask_person", {"question": "Which colour?"})
    assert wait_until(lambda: call.pending_action == "result")
    call.fulfil({"answer": "teal"})
    envelope = call.wait(5)
    assert envelope.error.kind == "invalid_output"
    assert "confidence" in envelope.error.message


def test_custom_tool_can_be_fulfilled_with_a_failure(tools, ask_person):
    call = tools.invoke("ask_person", {"question": "Which colour?"})
    assert wait_until(lambda: call.pending_action == "result")
    call.fulfil(wb.failure("unavailable", "the person stepped away"))
    envelope = call.wait(5)
    assert envelope.error.kind == "unavailable"
    assert envelope.error.message == "the person stepped away"


def test_calling_a_custom_tool_directly_explains_itself(ask_person):
    with pytest.raises(TypeError, match="custom tool"):
        ask_person("hi")
