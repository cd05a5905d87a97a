"""Detection helpers on wire strings: every shape, legacy forms, and garbage that never raises."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

import workbench as wb
from tests.envelope.support import envelopes, json_values

NESTED = '{"ok": false, "error": {"kind": "not_found", "message": "no such file", "details": {}}}'
NESTED_NO_OK = '{"error": {"kind": "timeout", "message": "too slow"}}'


@given(envelopes)
def test_detectors_agree_with_the_envelope(envelope):
    for form in (envelope.to_wire(), envelope.canonical(), json.dumps(envelope.canonical())):
        assert wb.is_success(form) is envelope.ok
        assert wb.is_error(form) is (not envelope.ok)
        if envelope.ok:
            assert wb.success_payload(form) == envelope.result
        else:
            assert wb.failure_message(form) == envelope.error.message
            assert wb.success_payload(form) is None


@pytest.mark.parametrize("text", ["[REJECTED] blocked", "[TIMEOUT] ran past 120 s", "  [REJECTED]"])
def test_legacy_prefixes_are_errors(text):
    assert wb.is_error(text)
    assert not wb.is_success(text)
    assert wb.success_payload(text) is None


def test_failure_message_of_legacy_prefix_is_the_text_after_it():
    assert wb.failure_message("[TIMEOUT] ran past 120 s") == "ran past 120 s"


@pytest.mark.parametrize(
    ("text", "message"), [(NESTED, "no such file"), (NESTED_NO_OK, "too slow")]
)
def test_legacy_nested_error_shape_is_an_error(text, message):
    assert wb.is_error(text)
    assert not wb.is_success(text)
    assert wb.failure_message(text) == message


GARBAGE = [
    "",
    " ",
    "not json",
    "{",
    "[]",
    "[1,2]",
    '"ok"',
    "null",
    "42",
    "true",
    '{"ok": "yes"}',
    "{}",
    None,
    42,
    3.5,
    [],
    b"\xff",
    object(),
]


@pytest.mark.parametrize(
    "garbage",
    GARBAGE,
    ids=lambda value: type(value).__name__ + ":" + repr(value)[:40].split(" at 0x")[0],
)
def test_garbage_is_neither_and_never_raises(garbage):
    assert wb.is_error(garbage) is False
    assert wb.is_success(garbage) is False
    assert wb.success_payload(garbage) is None
    assert isinstance(wb.failure_message(garbage), str)


def test_failure_message_falls_back_to_the_input():
    assert wb.failure_message("plain words") == "plain words"
    assert wb.failure_message('{"ok": true, "result": 1}') == '{"ok": true, "result": 1}'


@given(st.text() | st.binary() | json_values)
def test_detectors_never_raise_on_anything(value):
    for candidate in (value, json.dumps(value) if not isinstance(value, bytes) else value):
        wb.is_error(candidate)
        wb.is_success(candidate)
        wb.success_payload(candidate)
        assert isinstance(wb.failure_message(candidate), str)


def test_deeply_nested_json_does_not_raise():
    deep = "{" + '"a":{' * 100_000 + "}" * 100_001
    assert wb.is_error(deep) is False


class Hostile:
    def __str__(self) -> str:
        raise RuntimeError("no text")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no comparing")

    __hash__ = object.__hash__


def nested_list(levels: int) -> list:
    value: list = []
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(
    "data",
    [
        Hostile(),
        {"ok": False, "message": Hostile()},
        {"status": Hostile(), "tool_name": "t"},
        nested_list(100_000),
        {"ok": False, "message": nested_list(100_000)},
        "[" * 100_000,
        b"\xff\xfe",
    ],
)
def test_detectors_and_failure_message_never_raise_recursion_included(data):
    assert isinstance(wb.is_error(data), bool)
    assert isinstance(wb.is_success(data), bool)
    wb.success_payload(data)
    assert isinstance(wb.failure_message(data), str)
