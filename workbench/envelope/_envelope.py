"""The canonical result record: one ``Envelope`` per call, success or error.

The envelope is the runtime's truth, the canonical record. Two other surfaces are derived
from it and never the other way round: the wire string (``to_wire``) and the receipt a
model reads (rendered by the tool's family).
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any, Literal, Self

import pydantic_core
from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from workbench.envelope._display import envelope_html, envelope_text
from workbench.envelope._errors import ToolError
from workbench.envelope._wire import read_wire, to_wire

Status = Literal["success", "error"]
KilledBy = Literal["user", "timeout", "idle_timeout"]

SUMMARY_MAX_CHARS = 200
MAX_NESTING = 200
"""Deepest nesting a result may have (deeper cannot be serialised reliably)."""


class ArtifactRef(BaseModel):
    """A path-only reference to a file holding complete output; a result names it by index."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str


class UnrepresentableValue(ValueError):
    """A value with no JSON form: an integer too long to write, nesting too deep to walk."""


def jsonable(value: Any) -> Any:
    """Convert a tool's value to plain JSON data: tuples to lists, models to dicts, NaN to null.

    Raises ``UnrepresentableValue`` (a ``ValueError``) for a value JSON cannot hold at all.
    """
    try:
        return pydantic_core.to_jsonable_python(value, inf_nan_mode="null", fallback=repr)
    except (ValueError, RecursionError) as exc:
        reason = unrepresentable(value) or _unrepresentable_reason(exc)
        raise UnrepresentableValue(reason) from None


def unrepresentable(value: Any) -> str | None:
    """Why ``value`` cannot be written as JSON (an integer past Python's digit limit, or
    nesting past ``MAX_NESTING``), or None when nothing in it stops that. Never raises."""
    limit = sys.get_int_max_str_digits()
    # Below this many bits every integer has at most ``limit`` digits; at or above it, the
    # exact test decides (an estimate alone let integers of a few digits over the limit by).
    short_bits = int(limit * math.log2(10)) if limit else math.inf
    stack: list[tuple[Any, int]] = [(value, 0)]
    seen = 0
    while stack and seen < 1_000_000:
        item, depth = stack.pop()
        seen += 1
        if isinstance(item, int) and not isinstance(item, bool):
            if item.bit_length() >= short_bits and abs(item) >= 10**limit:
                return f"holds an integer too long to write as JSON (over {limit} digits)"
        elif isinstance(item, dict | list | tuple):
            if depth >= MAX_NESTING:
                return f"is nested more than {MAX_NESTING} levels deep"
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return None


def _unrepresentable_reason(exc: BaseException) -> str:
    text = str(exc)
    return f"has no JSON form ({text[:200]})"


# From the first character that is not white space to the end of its line: the first line of
# a text that is not blank (``str.splitlines`` ends lines at each of these characters).
_FIRST_LINE = re.compile(r"\S[^\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]*")


def _clip(text: str, limit: int = SUMMARY_MAX_CHARS) -> str:
    """The first line that is not blank, stripped and cut to ``limit`` characters; found
    without splitting the rest of the text, which may be long."""
    found = _FIRST_LINE.search(text)
    first = "" if found is None else found.group().rstrip()
    return first if len(first) <= limit else first[: limit - 1] + "…"


def _plural(count: int, noun: str, plural: str | None = None) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {plural or noun + 's'}"


def summarize(tool_name: str, result: Any, error: ToolError | None) -> str:
    """A short, deterministic one-line summary for an envelope that was given none."""
    if error is not None:
        return _clip(error.message)
    subject = tool_name or "tool"
    if isinstance(result, dict):
        kind = result.get("kind")
        if kind == "listing":
            count = result.get("entry_count", 0)
            return f"{_plural(count, 'entry', 'entries')} in {result.get('path', '')}"
        if kind == "file":
            lines = _plural(result.get("selected_lines", 0), "line")
            return f"read {result.get('path', '')} ({lines})"
        if set(result) == {"text"} and isinstance(result["text"], str):
            return _clip(result["text"]) or f"{subject} returned empty text"
        return f"{subject} returned an object with {_plural(len(result), 'key')}"
    if result is None:
        return f"{subject} succeeded"
    if isinstance(result, str):
        return _clip(result) or f"{subject} returned an empty string"
    if isinstance(result, list):
        return f"{subject} returned a list of {_plural(len(result), 'item')}"
    if isinstance(result, bool):
        return f"{subject} returned {'true' if result else 'false'}"
    if isinstance(result, int | float):
        return _clip(f"{subject} returned {result!r}")
    return _clip(f"{subject} returned {json.dumps(result)}")


def success_record(tool_name: str, result: Any, call_id: str | None) -> dict[str, Any]:
    """``Envelope(tool_name=..., status="success", result=..., call_id=...).canonical()``,
    written without building the envelope, for a ``result`` that is plain JSON data as
    ``json.loads`` gives it (no NaN or infinity, nested at most ``MAX_NESTING`` deep): what an
    import of thousands of calls writes for each success (``tests/envelope`` holds the two
    equal).

    Examples:
        >>> record = success_record("read_file", {"content": "hi"}, "c1")
        >>> record["summary_text"], record["status"], record["error"]
        ('read_file returned an object with 1 key', 'success', None)
    """
    return {
        "tool_name": tool_name,
        "status": "success",
        "summary_text": _clip(summarize(tool_name, result, None)) or "success",
        "result": result,
        "error": None,
        "warnings": [],
        "artifacts": [],
        "call_id": call_id,
    }


class Envelope(BaseModel):
    """The canonical record of one tool call.

    Exclusivity is enforced: a success has no ``error`` (its ``result`` may be any JSON value,
    null included); an error has an ``error`` and a null ``result``. ``summary_text`` is always
    present and short; one is derived when none is given.

    Examples:
        >>> envelope = Envelope.from_wire('{"ok": true, "tool": "add", "result": 3}')
        >>> envelope.status, envelope.result, envelope.summary_text
        ('success', 3, 'add returned 3')
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool_name: str = ""
    status: Status
    summary_text: str = ""
    result: Any = None
    error: ToolError | None = None
    warnings: tuple[str, ...] = ()
    artifacts: tuple[ArtifactRef, ...] = ()
    call_id: str | None = None
    killed_by: KilledBy | None = None

    @field_validator("result", mode="before")
    @classmethod
    def _plain_json(cls, value: Any) -> Any:
        if type(value) is int and (reason := unrepresentable(value)) is not None:
            raise UnrepresentableValue(reason)
        return value if value is None or type(value) in (str, int, bool) else jsonable(value)

    @model_validator(mode="after")
    def _exclusive_and_summarised(self) -> Self:
        if self.status == "success" and self.error is not None:
            raise ValueError("a success envelope must have a null error")
        if self.status == "error":
            if self.error is None:
                raise ValueError("an error envelope requires an error")
            if self.result is not None:
                raise ValueError("an error envelope must have a null result")
        summary = self.summary_text
        if not summary.strip() or len(summary) > SUMMARY_MAX_CHARS or "\n" in summary:
            derived = _clip(summary) if summary.strip() else ""
            object.__setattr__(
                self,
                "summary_text",
                derived or _clip(summarize(self.tool_name, self.result, self.error)) or self.status,
            )
        return self

    @property
    def ok(self) -> bool:
        """True for a success."""
        return self.status == "success"

    def canonical(self) -> dict[str, Any]:
        """The canonical record as a plain dict (``killed_by`` only when set)."""
        record: dict[str, Any] = {
            "tool_name": self.tool_name,
            "status": self.status,
            "summary_text": self.summary_text,
            "result": self.result,
            "error": None if self.error is None else _error_dict(self.error),
            "warnings": list(self.warnings),
            "artifacts": [{"path": ref.path} for ref in self.artifacts],
            "call_id": self.call_id,
        }
        if self.killed_by is not None:
            record["killed_by"] = self.killed_by
        return record

    @classmethod
    def from_canonical(cls, record: dict[str, Any]) -> Envelope:
        """Rebuild an envelope from ``canonical()`` output."""
        return cls.model_validate(record)

    def replace(self, **changes: Any) -> Envelope:
        """A validated copy with some fields changed (envelopes are immutable)."""
        data = {name: getattr(self, name) for name in type(self).model_fields}
        data.update(changes)
        return type(self).model_validate(data)

    def to_wire(self) -> str:
        """The wire JSON string: ``{"ok": true, ...}`` or ``{"ok": false, "kind", ...}``."""
        return to_wire(self)

    @classmethod
    def from_wire(cls, data: str | bytes | dict[str, Any]) -> Envelope:
        """Read a wire string, the legacy nested failure, a canonical record (a dict or its
        JSON), or a legacy ``[REJECTED]`` / ``[TIMEOUT]`` string. Raises ``ValueError`` on
        anything else."""
        fields = read_wire(data)
        try:
            return cls.model_validate(fields)
        except ValueError:
            raise
        except Exception as exc:  # odd values inside a known shape still get a message
            raise ValueError(
                f"not a tool envelope: {type(exc).__name__} while reading it"
            ) from None

    def _repr_mimebundle_(self, **_: Any) -> dict[str, str]:
        return {"text/plain": envelope_text(self), "text/html": envelope_html(self)}


def _error_dict(error: ToolError) -> dict[str, Any]:
    record: dict[str, Any] = {"kind": error.kind.value, "message": error.message}
    for name in ("field", "expected", "details", "recovery_hint"):
        value = getattr(error, name)
        if value is not None:
            record[name] = value
    record["retryable"] = error.retryable
    return record
