"""The error vocabulary: one table of kinds, and the ToolError payload that carries one.

Every failure a model can read names a kind from ``ErrorKind``. The table below is the single
source of truth for which kinds exist, whether a retry may help by default, and what each means;
adding a kind is an edit of this table, never a string typed somewhere else.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Self, cast

from pydantic import BaseModel, ConfigDict, field_validator, model_validator


class ErrorKind(StrEnum):
    """A curated error kind, with its default ``retryable`` and a one-line meaning.

    In groups: the kinds every tool contract names (arguments, policy, the person, time,
    execution, paths, availability, unknown tools), the finer kinds of tools that work on files
    and commands, the kinds of a tool-result envelope that checks inputs and execution roots,
    and the two a person at a card produces (``terminated``) or a call's own contract does
    (``invalid_output``).

    Examples:
        >>> ErrorKind("timeout").retryable, ErrorKind.NOT_FOUND.retryable
        (True, False)
    """

    retryable: bool
    meaning: str

    def __new__(cls, value: str, retryable: bool, meaning: str) -> Self:
        member = str.__new__(cls, value)
        member._value_ = value
        member.retryable = retryable
        member.meaning = meaning
        return member

    # the kinds every tool contract names
    INVALID_ARGS = "invalid_args", True, "argument missing, malformed, or scope-incompatible"
    REJECTED = "rejected", False, "blocked by configured policy"
    USER_DENIED = "user_denied", False, "the person clicked Deny on an approval prompt"
    TIMEOUT = "timeout", True, "the tool ran past its time budget"
    EXECUTION_ERROR = "execution_error", True, "the tool ran but failed"
    NOT_FOUND = "not_found", False, "a referenced path (file or directory) does not exist"
    UNAVAILABLE = "unavailable", True, "the tool exists but cannot run right now"
    TOOL_NOT_FOUND = "tool_not_found", False, "the model called a tool the registry does not have"
    # the finer kinds of tools that work on files and commands
    UNKNOWN_TOOL = "unknown_tool", False, "the tool name is not known to the executor"
    OUTSIDE_WORKSPACE = "outside_workspace", False, "a path points outside the allowed workspace"
    RESOURCE_MISSING = "resource_missing", False, "a resource the tool needs is missing"
    NO_MATCH = "no_match", False, "a search or edit anchor matched nothing"
    NOT_UNIQUE = "not_unique", False, "an edit anchor matched more than once"
    READ_FAILED = "read_failed", True, "reading a file or resource failed"
    WRITE_FAILED = "write_failed", True, "writing a file or resource failed"
    COMMAND_FAILED = "command_failed", True, "a command could not be started or crashed"
    PERMISSION_DENIED = "permission_denied", False, "the operating system refused access"
    DETACHED = "detached", False, "the work was detached from the call and cannot be awaited"
    # inputs and execution roots checked by the envelope
    INVALID_TOOL_INPUT = "invalid_tool_input", False, "the input does not match the tool schema"
    EXECUTION_ROOT_VIOLATION = (
        "execution_root_violation",
        False,
        "a working directory is outside the current execution root",
    )
    # workbench's own
    TERMINATED = "terminated", False, "the person stopped the call with Terminate"
    INVALID_OUTPUT = "invalid_output", False, "the result does not match the tool's output schema"


def known_kind(value: str) -> bool:
    """True when ``value`` names a kind in the table."""
    return value in ErrorKind._value2member_map_


def as_kind(value: str | ErrorKind) -> ErrorKind:
    """The kind named by ``value``; ``ValueError`` naming the known kinds when there is none."""
    member = ErrorKind._value2member_map_.get(str(value))
    if member is None:
        known = ", ".join(kind.value for kind in ErrorKind)
        raise ValueError(f"unknown error kind {value!r}; known kinds: {known}")
    return cast(ErrorKind, member)


class ToolError(BaseModel):
    """The error payload of a failed call: its kind, the message, and where the fault lies.

    ``retryable`` left unset takes the kind's default from ``ErrorKind``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ErrorKind
    message: str
    field: str | None = None
    expected: str | None = None
    details: dict[str, Any] | None = None
    recovery_hint: str | None = None
    retryable: bool = False

    @field_validator("message")
    @classmethod
    def _message_not_blank(cls, value: str) -> str:
        return value if value.strip() else "(no message)"

    @model_validator(mode="before")
    @classmethod
    def _default_retryable(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("retryable") is None:
            kind = str(data.get("kind"))
            data = {**data, "retryable": known_kind(kind) and as_kind(kind).retryable}
        return data
