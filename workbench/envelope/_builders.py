"""Builders for envelopes, and the one place where thrown exceptions become error kinds."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import pydantic

from workbench.envelope._envelope import Envelope, UnrepresentableValue
from workbench.envelope._errors import ErrorKind, ToolError, as_kind

EntryType = Literal["file", "directory", "symlink"]


class ToolFailure(Exception):
    """Raise from a tool body to end the call with a failure envelope of a chosen kind.

    ``raise wb.ToolFailure("not_found", "no user named 'ada'", field="name")`` reads better than
    threading a failure envelope back through helper functions.

    Examples:
        >>> import workbench as wb
        >>> tools = wb.Registry(history=":memory:")
        >>> @tools.tool
        ... def find_user(name: str) -> str:
        ...     '''Find a user by name.'''
        ...     raise ToolFailure("not_found", f"no user named {name!r}", field="name",
        ...                       recovery_hint="list the users first")
        >>> call = tools.invoke("find_user", {"name": "ada"})
        >>> print(call.wait().error.kind, call.envelope.error.retryable)
        not_found False
        >>> print(call.receipt)
        Error (not_found): no user named 'ada'
        field: name
        hint: list the users first
        do not retry unchanged
        >>> tools.close()
    """

    def __init__(self, kind: str | ErrorKind, message: str, **fields: Any) -> None:
        super().__init__(message)
        self.envelope = failure(kind, message, **fields)


def success(
    tool: str = "",
    result: Any = None,
    *,
    text: str | None = None,
    warnings: Iterable[str] = (),
    summary: str | None = None,
) -> Envelope:
    """A success envelope. ``text=`` is sugar for ``result={"text": text}``.

    Examples:
        >>> success("add", 3).to_wire()
        '{"ok": true, "tool": "add", "result": 3}'
    """
    if text is not None:
        if result is not None:
            raise ValueError("give either result or text, not both")
        result = {"text": text}
    return Envelope(
        tool_name=tool,
        status="success",
        summary_text=summary or "",
        result=result,
        warnings=tuple(warnings),
    )


def failure(
    kind: str | ErrorKind,
    message: str,
    *,
    tool: str | None = None,
    field: str | None = None,
    expected: str | None = None,
    retryable: bool | None = None,
    details: Mapping[str, Any] | None = None,
    recovery_hint: str | None = None,
) -> Envelope:
    """A failure envelope; ``retryable`` defaults by kind (see ``ErrorKind``).

    Examples:
        >>> envelope = failure("not_found", "no such file: a.txt", tool="file_read", field="path")
        >>> envelope.error.kind.value, envelope.error.retryable
        ('not_found', False)
    """
    error = ToolError(
        kind=as_kind(kind),
        message=message,
        field=field,
        expected=expected,
        retryable=retryable,
        details=dict(details) if details is not None else None,
        recovery_hint=recovery_hint,
    )
    return Envelope(tool_name=tool or "", status="error", error=error)


def listing(
    path: str,
    entries: Iterable[Mapping[str, Any]],
    *,
    truncated: bool = False,
    tool: str | None = None,
    entry_count: int | None = None,
) -> Envelope:
    """A directory listing (``kind: "listing"``): each entry's ``path`` is ready to pass back
    to a read.

    ``entry_count`` is the number of entries in the directory; it defaults to the number given
    and exceeds it when the listing was ``truncated``.

    Examples:
        >>> envelope = listing("src", [{"name": "a.py"}, {"name": "lib", "type": "directory"}])
        >>> [entry["path"] for entry in envelope.result["entries"]]
        ['src/a.py', 'src/lib']
    """
    rows = [_entry(path, entry) for entry in entries]
    result = {
        "kind": "listing",
        "path": path,
        "entries": rows,
        "entry_count": len(rows) if entry_count is None else entry_count,
        "truncated": truncated,
    }
    return Envelope(tool_name=tool or "", status="success", result=result)


def _entry(parent: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    name = str(entry["name"])
    kind = entry.get("type", "file")
    if kind not in ("file", "directory", "symlink"):
        raise ValueError(f"entry type must be file, directory or symlink, not {kind!r}")
    default_path = f"{parent.rstrip('/')}/{name}" if parent not in ("", ".") else name
    return {**entry, "name": name, "path": str(entry.get("path") or default_path), "type": kind}


def file_result(
    path: str,
    text: str,
    *,
    start_line: int = 1,
    total_lines: int | None = None,
    total_bytes: int | None = None,
    truncated: bool = False,
    tool: str | None = None,
) -> Envelope:
    """A ``kind: "file"`` result: the text of a file (or a line range of it)."""
    selected = len(text.splitlines())
    result = {
        "kind": "file",
        "path": path,
        "text": text,
        "start_line": start_line,
        "end_line": start_line + selected - 1,
        "selected_lines": selected,
        "total_lines": selected if total_lines is None else total_lines,
        "bytes": len(text.encode("utf-8")) if total_bytes is None else total_bytes,
        "truncated": truncated,
    }
    return Envelope(tool_name=tool or "", status="success", result=result)


# The one table from exception types to error kinds; the first matching row wins.
_EXCEPTION_KINDS: tuple[tuple[type[BaseException], ErrorKind, str | None], ...] = (
    (
        FileNotFoundError,
        ErrorKind.NOT_FOUND,
        "check the path; list the parent directory to see what exists",
    ),
    (
        PermissionError,
        ErrorKind.REJECTED,
        "the operation is not permitted here; choose a path or action that is allowed",
    ),
    (TimeoutError, ErrorKind.TIMEOUT, "retry with a smaller request or a longer timeout"),
    (
        subprocess.TimeoutExpired,
        ErrorKind.TIMEOUT,
        "retry with a smaller request or a longer timeout",
    ),
    (ConnectionError, ErrorKind.UNAVAILABLE, "the service could not be reached; retry later"),
    (
        UnrepresentableValue,
        ErrorKind.INVALID_OUTPUT,
        "return plain JSON data: text, numbers, true/false, null, lists and objects",
    ),
)


def _unwrapped(exc: BaseException) -> BaseException:
    """The ``UnrepresentableValue`` behind a validation error of an envelope built around a
    value JSON cannot hold (a body's ``wb.success(..., result=...)``), else ``exc`` itself:
    such a result is an ``invalid_output`` however it was returned."""
    if isinstance(exc, pydantic.ValidationError):
        causes = [(error.get("ctx") or {}).get("error") for error in exc.errors()]
        found = [cause for cause in causes if isinstance(cause, UnrepresentableValue)]
        if found and len(found) == len(causes):
            return found[0]
    return exc


def kind_for_exception(exc: BaseException) -> ErrorKind:
    """The error kind a thrown exception maps to."""
    exc = _unwrapped(exc)
    for exc_type, kind, _hint in _EXCEPTION_KINDS:
        if isinstance(exc, exc_type):
            return kind
    return ErrorKind.EXECUTION_ERROR


UNKNOWN_TOOLS_LISTED = 20
"""How many registered names the failure for an unknown tool lists."""


def unknown_tool(name: object, available: list[str]) -> Envelope:
    """The failure of a call to a tool nobody registered: ``tool_not_found``, naming the
    tools there are (the first ``UNKNOWN_TOOLS_LISTED``).

    Examples:
        >>> unknown_tool("serch", ["search", "read"]).error.message
        'Unknown tool `serch`; available tools: `search`, `read`.'
    """
    listed = ", ".join(f"`{known}`" for known in available[:UNKNOWN_TOOLS_LISTED]) or "none"
    return failure(
        ErrorKind.TOOL_NOT_FOUND,
        f"Unknown tool `{name}`; available tools: {listed}.",
        tool=name if isinstance(name, str) else None,
        recovery_hint="call one of the available tools by its exact name",
    )


def from_exception(exc: BaseException, tool: str | None = None) -> Envelope:
    """Map a thrown exception to a failure envelope so no exception reaches a model raw.

    Missing file → ``not_found``, permission → ``rejected``, timeout → ``timeout``, connection
    → ``unavailable``, a result JSON cannot hold → ``invalid_output``, anything else →
    ``execution_error``. A ``ToolFailure`` keeps its envelope.

    Examples:
        >>> missing = FileNotFoundError(2, "No such file or directory", "a.txt")
        >>> from_exception(missing, tool="file_read").error.message
        'No such file or directory: a.txt'
    """
    if isinstance(exc, ToolFailure):
        return exc.envelope.replace(tool_name=tool or exc.envelope.tool_name)
    exc = _unwrapped(exc)
    hint = next((h for t, _k, h in _EXCEPTION_KINDS if isinstance(exc, t)), None)
    details: dict[str, Any] = {"exception": type(exc).__name__}
    if isinstance(exc, OSError) and exc.filename is not None:
        details["path"] = str(exc.filename)
    return failure(
        kind_for_exception(exc),
        _exception_message(exc, tool),
        tool=tool,
        details=details,
        recovery_hint=hint,
    )


def _exception_message(exc: BaseException, tool: str | None) -> str:
    if isinstance(exc, UnrepresentableValue):
        return f"`{tool or 'the tool'}` returned a result that {exc}"
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename is not None else exc.strerror
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
