"""The gate: one typed decision (allow, deny, fulfil, modify) from every decider, bound to the
arguments the decider saw."""

from __future__ import annotations

import threading

import pytest

import workbench as wb
from tests.conftest import wait_until
from workbench.runtime.sheet._gate import Decision, GateRequest, binding_of


@pytest.fixture
def writer(tools, tmp_path):
    @tools.tool(permission="always_ask")
    def write(name: str, text: str = "x") -> str:
        """Write a file."""
        (tmp_path / name).write_text(text)
        return name

    return tmp_path


def test_modify_approves_with_edited_arguments_checked_and_recorded(tools, writer):
    call = tools.invoke("write", {"name": "a.txt"})
    assert wait_until(lambda: call.pending_action == "approval")
    call.modify({"name": "b.txt", "text": "edited"})
    envelope = call.wait(5)
    assert envelope.ok and envelope.result == "b.txt"
    assert (writer / "b.txt").read_text() == "edited" and not (writer / "a.txt").exists()
    assert call.arguments == {"name": "b.txt", "text": "edited"}
    assert call.modifications == [{"from": {"name": "a.txt"}, "to": call.arguments, "by": "person"}]
    types = [event.type for event in call.events]
    assert types.index("tool.modified") < types.index("tool.approved") < types.index("tool.started")
    row = tools.history.get(call.id)
    assert any(event["type"] == "tool.modified" for event in row["events"])


def test_a_modification_the_preflight_refuses_is_refused_and_the_call_keeps_waiting(tools, writer):
    call = tools.invoke("write", {"name": "a.txt"})
    assert wait_until(lambda: call.pending_action == "approval")
    with pytest.raises(ValueError, match="name"):
        call.modify({"nom": "b.txt"})
    assert call.state == "awaiting_approval"
    call.decide(Decision.modify({"nom": "b.txt"}))  # straight to the gate: set aside there
    assert wait_until(lambda: any(e.type == "tool.decision_set_aside" for e in call.events))
    assert call.state == "awaiting_approval"
    call.approve()
    assert call.wait(5).result == "a.txt"


def test_an_approval_made_for_other_arguments_no_longer_applies(tools, writer):
    call = tools.invoke("write", {"name": "a.txt"})
    assert wait_until(lambda: call.pending_action == "approval")
    call.approve(binding=binding_of({"name": "other.txt", "text": "x"}))
    assert wait_until(lambda: any("no longer applies" in w for w in call.warnings))
    assert call.state == "awaiting_approval" and not (writer / "a.txt").exists()
    shown = call.gate.request
    assert shown is not None
    call.approve(binding=shown.binding)  # what the card does: bound to what it showed
    assert call.wait(5).ok


def test_an_early_approval_is_void_when_a_before_tool_hook_changes_the_arguments(tools, writer):
    started = threading.Event()
    go = threading.Event()

    @tools.before_tool
    def redirect(call, arguments):
        started.set()
        go.wait(5)
        return {**arguments, "name": "redirected.txt"}

    call = tools.invoke("write", {"name": "a.txt"})
    assert started.wait(5)
    call.approve()  # bound to the arguments known now: a.txt
    go.set()
    assert wait_until(lambda: call.pending_action == "approval")
    assert wait_until(lambda: any("no longer applies" in w for w in call.warnings))
    assert not (writer / "redirected.txt").exists()
    call.approve()
    assert call.wait(5).result == "redirected.txt"


def test_an_approver_decides_before_any_person(tools, writer):
    seen: list[GateRequest] = []

    async def only_txt(request: GateRequest) -> Decision | None:
        seen.append(request)
        name = (request.arguments or {}).get("name", "")
        if name.endswith(".txt"):
            return Decision.allow(by="approver")
        return Decision.deny("only .txt files", by="approver")

    tools.approver = only_txt
    assert tools.invoke("write", {"name": "ok.txt"}).wait(5).ok
    denied = tools.invoke("write", {"name": "evil.sh"}).wait(5)
    assert denied.error.kind is wb.ErrorKind.USER_DENIED and "only .txt" in denied.error.message
    assert [request.tool for request in seen] == ["write", "write"]
    assert seen[0].binding == binding_of({"name": "ok.txt"})


def test_an_approver_that_abstains_leaves_the_decision_to_the_person(tools, writer):
    async def abstain(request: GateRequest) -> Decision | None:
        return None

    tools.approver = abstain
    call = tools.invoke("write", {"name": "p.txt"})
    assert wait_until(lambda: call.pending_action == "approval")
    call.deny("not today")
    assert call.wait(5).error.kind is wb.ErrorKind.USER_DENIED


def test_a_fulfil_decision_does_not_answer_an_approval_request(tools, writer):
    call = tools.invoke("write", {"name": "a.txt"})
    assert wait_until(lambda: call.pending_action == "approval")
    call.fulfil("sneaky")
    assert wait_until(lambda: any("does not answer" in w for w in call.warnings))
    call.deny()
    assert call.wait(5).error.kind is wb.ErrorKind.USER_DENIED


def test_a_deny_answers_a_custom_tools_request_for_its_result(tools):
    tools.register(
        None,
        name="ask_person",
        description="The person writes the answer",
        input_schema={"type": "object", "properties": {}},
        ownership="custom",
    )
    call = tools.invoke("ask_person", {})
    assert wait_until(lambda: call.pending_action == "result")
    call.deny("I will not answer that")
    error = call.wait(5).error
    assert error.kind is wb.ErrorKind.USER_DENIED and "I will not answer that" in error.message
    assert "tool.denied" in [event.type for event in call.events]
    assert not call.warnings  # answered, not set aside
