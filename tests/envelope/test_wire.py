"""The wire surface: seed 000 strings out, every known shape back in, and the shipped schema."""

from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

import workbench as wb
from tests.envelope.support import envelopes, failures, json_values, successes

VALIDATOR = jsonschema.Draft202012Validator(wb.wire_schema())


def test_the_shipped_schema_is_itself_valid_and_lists_every_kind():
    jsonschema.Draft202012Validator.check_schema(wb.wire_schema())
    kinds = wb.wire_schema()["$defs"]["failure"]["properties"]["kind"]["enum"]
    assert kinds == [kind.value for kind in wb.ErrorKind]


def test_success_wire_shape_of_seed_000():
    envelope = wb.success(
        "sandbox_write_file", {"path": "/home/agent/foo.txt", "size": 123}, warnings=["slow disk"]
    )
    assert json.loads(envelope.to_wire()) == {
        "ok": True,
        "tool": "sandbox_write_file",
        "result": {"path": "/home/agent/foo.txt", "size": 123},
        "warnings": ["slow disk"],
    }


def test_failure_wire_shape_of_seed_000_omits_unset_keys():
    envelope = wb.failure(
        "invalid_args",
        "Missing required argument `content` (string).",
        field="content",
        expected="non-empty string of file contents",
        tool="sandbox_write_file",
    )
    wire = envelope.to_wire()
    assert list(json.loads(wire)) == [
        "ok",
        "kind",
        "message",
        "field",
        "expected",
        "tool",
        "retryable",
    ]
    assert json.loads(wire) == {
        "ok": False,
        "kind": "invalid_args",
        "message": "Missing required argument `content` (string).",
        "field": "content",
        "expected": "non-empty string of file contents",
        "tool": "sandbox_write_file",
        "retryable": True,
    }
    bare = json.loads(wb.failure("timeout", "slow").to_wire())
    assert bare == {"ok": False, "kind": "timeout", "message": "slow", "retryable": True}


def test_wire_keeps_unicode_readable_and_carries_killed_by():
    envelope = wb.success("t", text="héllo ✓").replace(killed_by="user")
    assert "héllo ✓" in envelope.to_wire()
    assert json.loads(envelope.to_wire())["killed_by"] == "user"


@given(envelopes)
def test_every_envelope_validates_against_the_shipped_schema(envelope):
    VALIDATOR.validate(json.loads(envelope.to_wire()))


@given(envelopes)
def test_round_trip_wire_envelope_wire(envelope):
    wire = envelope.to_wire()
    again = wb.Envelope.from_wire(wire)
    assert again.to_wire() == wire
    assert again.status == envelope.status
    assert again.result == envelope.result


@given(failures)
def test_round_trip_keeps_every_failure_field(envelope):
    again = wb.Envelope.from_wire(envelope.to_wire())
    assert again.error == envelope.error
    assert again.tool_name == envelope.tool_name


@given(envelopes)
def test_round_trip_through_the_canonical_dict(envelope):
    assert wb.Envelope.from_wire(envelope.canonical()) == envelope
    assert wb.Envelope.from_wire(json.dumps(envelope.canonical())) == envelope


@given(successes)
def test_round_trip_from_bytes(envelope):
    assert wb.Envelope.from_wire(envelope.to_wire().encode()).to_wire() == envelope.to_wire()


@given(json_values)
def test_any_json_result_survives_the_wire(value):
    assert wb.Envelope.from_wire(wb.success("t", value).to_wire()).result == value


def test_reads_seed_003_nested_failure():
    wire = (
        '{"ok": false, "error": {"kind": "command_failed", "message": "boom", '
        '"details": {"code": 2}}}'
    )
    envelope = wb.Envelope.from_wire(wire)
    assert envelope.error.kind == "command_failed"
    assert envelope.error.message == "boom"
    assert envelope.error.details == {"code": 2}
    assert envelope.error.retryable is True
    VALIDATOR.validate(json.loads(envelope.to_wire()))


def test_reads_seed_001_canonical_error():
    record = {
        "tool_name": "ExecCommand",
        "status": "error",
        "summary_text": "requested working directory is outside the current execution root",
        "result": None,
        "error": {
            "kind": "execution_root_violation",
            "message": "requested working directory is outside the current execution root",
            "details": {"workdir": "../other-repo"},
            "recovery_hint": "omit workdir or use a relative path inside the active workspace",
            "retryable": False,
        },
    }
    envelope = wb.Envelope.from_wire(record)
    assert envelope.tool_name == "ExecCommand"
    assert envelope.error.recovery_hint.startswith("omit workdir")
    assert envelope.canonical()["error"] == record["error"]


def test_a_foreign_kind_is_kept_in_details_not_lost():
    envelope = wb.Envelope.from_wire('{"ok": false, "kind": "quota_exceeded", "message": "x"}')
    assert envelope.error.kind == "execution_error"
    assert envelope.error.details == {"original_kind": "quota_exceeded"}


@pytest.mark.parametrize(
    ("text", "kind"),
    [("[REJECTED] blocked by policy", "rejected"), ("  [TIMEOUT] 120s", "timeout")],
)
def test_reads_legacy_prefix_strings(text, kind):
    envelope = wb.Envelope.from_wire(text)
    assert envelope.error.kind == kind
    assert envelope.error.message == text.strip().split("] ", 1)[1]


@pytest.mark.parametrize(
    "garbage",
    ["", "   ", "not json", "[1, 2]", '"str"', "{", "null", b"\xff\xfe", '{"neither": 1}'],
)
def test_from_wire_refuses_garbage_with_a_clear_value_error(garbage):
    with pytest.raises(ValueError, match="not a tool envelope"):
        wb.Envelope.from_wire(garbage)


# ── valid UTF-8 always; from_wire raises only ValueError ────────────────────────────────


@given(envelopes)
def test_every_wire_string_encodes_as_utf8_even_with_lone_surrogates(envelope):
    poisoned = envelope.replace(
        warnings=(*envelope.warnings, "lone \ud800 surrogate"), tool_name="t\udfff"
    )
    wire = poisoned.to_wire()
    wire.encode("utf-8")
    assert wb.Envelope.from_wire(wire).tool_name == "t\udfff"


def test_a_result_with_a_lone_surrogate_has_a_utf8_wire_and_receipt():
    tools = wb.Registry(history=None)

    @tools.tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    call = tools.invoke("echo", {"text": "a\ud800b"})
    envelope = call.wait(5)
    envelope.to_wire().encode("utf-8")
    call.receipt.encode("utf-8")
    assert call.receipt == "a\\ud800b"


class Hostile:
    def __str__(self) -> str:
        raise RuntimeError("no text for you")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no comparing either")

    __hash__ = object.__hash__


def deep_json(levels: int) -> str:
    return '{"ok": false, "message": ' + "[" * levels + "]" * levels + "}"


def nested_list(levels: int) -> list:
    value: list = []
    for _ in range(levels):
        value = [value]
    return value


odd_inputs = st.one_of(
    st.text(),
    st.binary(),
    json_values,
    st.integers(),
    st.none(),
    st.lists(st.text()),
    st.dictionaries(st.text(), json_values),
    st.builds(lambda v: {"ok": False, "kind": v, "message": v}, json_values),
    st.builds(lambda v: {"ok": True, "result": v, "warnings": v}, json_values),
    st.builds(lambda v: {"status": "error", "tool_name": v, "error": v}, json_values),
    st.builds(
        lambda v: {"ok": False, "error": {"kind": v, "message": "m", "details": v}}, json_values
    ),
    st.just({"ok": False, "message": Hostile()}),
    st.just({"status": Hostile(), "tool_name": "t"}),
    st.just(deep_json(100_000)),
    st.just({"ok": True, "result": nested_list(5000)}),
)


@given(odd_inputs)
def test_from_wire_raises_only_value_error_with_a_message(data):
    try:
        wb.Envelope.from_wire(data)
    except ValueError as exc:
        assert str(exc)
