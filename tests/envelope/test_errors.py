"""The error vocabulary: seed 000's defaults, one meaning per kind, and ToolError's defaulting."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

import workbench as wb

SEED_000_DEFAULTS = {
    "invalid_args": True,
    "rejected": False,
    "user_denied": False,
    "timeout": True,
    "execution_error": True,
    "not_found": False,
    "unavailable": True,
    "tool_not_found": False,
}

SEED_003_TOOL_KINDS = [
    "invalid_args",
    "unknown_tool",
    "outside_workspace",
    "not_found",
    "resource_missing",
    "no_match",
    "not_unique",
    "read_failed",
    "write_failed",
    "command_failed",
    "timeout",
    "permission_denied",
    "detached",
]


@pytest.mark.parametrize(("kind", "retryable"), SEED_000_DEFAULTS.items())
def test_seed_000_kinds_default_retryable_exactly_as_the_table_says(kind, retryable):
    assert wb.ErrorKind(kind).retryable is retryable
    assert wb.ToolError(kind=kind, message="m").retryable is retryable
    assert wb.failure(kind, "m").error.retryable is retryable


@pytest.mark.parametrize(
    "kind", [*SEED_003_TOOL_KINDS, "invalid_tool_input", "execution_root_violation"]
)
def test_seed_003_and_001_kinds_are_in_the_vocabulary(kind):
    assert wb.ErrorKind(kind).value == kind


def test_every_kind_has_a_one_line_meaning_and_a_boolean_default():
    for kind in wb.ErrorKind:
        assert isinstance(kind.retryable, bool)
        assert kind.meaning and "\n" not in kind.meaning
        assert kind.value == kind.value.lower() and " " not in kind.value


def test_explicit_retryable_overrides_the_kind_default():
    assert wb.failure("timeout", "slow", retryable=False).error.retryable is False
    assert wb.failure("rejected", "no", retryable=True).error.retryable is True


def test_a_kind_not_in_the_table_is_refused():
    with pytest.raises(ValueError):
        wb.failure("made_up_kind", "m")
    with pytest.raises(ValidationError):
        wb.ToolError(kind="made_up_kind", message="m")


def test_blank_message_is_replaced_rather_than_left_empty():
    assert wb.failure("execution_error", "   ").error.message == "(no message)"
