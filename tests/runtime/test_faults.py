"""Fault injection: every kind, through the normal path, marked as injected in the history."""

from __future__ import annotations

import pytest

import workbench as wb

WAIT_S = 60
"""A bound, not a measure: the first call that validates a schema imports jsonschema, which
alone takes seconds of CPU on a loaded machine."""


@pytest.fixture
def reader(tools):
    @tools.tool
    def read_config(name: str) -> dict:
        """Read a config entry."""
        return {"name": name, "value": 1}

    return read_config


@pytest.mark.parametrize("kind", [kind.value for kind in wb.ErrorKind])
def test_each_kind_can_be_injected_and_is_observed_in_envelope_and_history(tools, reader, kind):
    tools.inject_fault("read_config", kind)
    call = tools.invoke("read_config", {"name": "x"})
    envelope = call.wait(WAIT_S)
    assert envelope.error.kind == kind
    assert envelope.error.retryable is wb.ErrorKind(kind).retryable
    row = tools.history.get(call.id)
    assert row["injected"] is True and row["kind"] == kind
    assert tools.invoke("read_config", {"name": "x"}).wait(WAIT_S).ok  # times=1: next call is clean


def test_a_timeout_after_some_streamed_output(tools, reader):
    tools.inject_fault("read_config", "timeout", after_output=["loading…\n", "still loading…\n"])
    call = tools.invoke("read_config", {"name": "x"})
    envelope = call.wait(WAIT_S)
    assert envelope.killed_by == "timeout"
    assert call.output() == "loading…\nstill loading…\n"
    assert "still loading" in call.receipt
    types = [e.type for e in call.events]
    assert types == ["tool.queued", "tool.started", "tool.output", "tool.output", "tool.failed"]


def test_an_injected_denial_goes_through_the_approval_events(tools, reader):
    tools.inject_fault("read_config", "user_denied")
    call = tools.invoke("read_config", {"name": "x"})
    assert call.wait(WAIT_S).error.kind == "user_denied"
    assert "tool.denied" in [e.type for e in call.events]


def test_faults_still_pass_the_preflight_and_count_down(tools, reader):
    tools.inject_fault("read_config", "unavailable", times=2)
    bad = tools.invoke("read_config", {"nom": "x"}).wait(WAIT_S)
    assert bad.error.kind == "invalid_args"  # preflight first: the fault is not spent
    kinds = [tools.invoke("read_config", {"name": "x"}).wait(WAIT_S).status for _ in range(3)]
    assert kinds == ["error", "error", "success"]


def test_clear_faults_ends_injection(tools, reader):
    tools.inject_fault("read_config", "not_found", times=5)
    tools.clear_faults()
    assert tools.invoke("read_config", {"name": "x"}).wait(WAIT_S).ok
    with pytest.raises(ValueError, match="unknown error kind"):
        tools.inject_fault("read_config", "gremlins")
