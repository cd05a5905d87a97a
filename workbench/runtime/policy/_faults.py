"""Fault injection: make a tool's next calls fail with a chosen kind, through the normal path.

For trainers demoing failures: the call still passes preflight, hooks, the gate and the events,
and its history row says it was injected; only the body is replaced by the failure.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass

from workbench.envelope import ErrorKind, as_kind

DEFAULT_MESSAGES: dict[ErrorKind, str] = {
    ErrorKind.TIMEOUT: "`{tool}` ran past its time budget and was stopped",
    ErrorKind.UNAVAILABLE: "`{tool}` is unavailable right now",
    ErrorKind.NOT_FOUND: "the path `{tool}` was asked for does not exist",
    ErrorKind.USER_DENIED: "The person denied this `{tool}` call.",
    ErrorKind.REJECTED: "`{tool}` is blocked by policy",
    ErrorKind.EXECUTION_ERROR: "`{tool}` failed while running",
    ErrorKind.INVALID_ARGS: "`{tool}` refused its arguments",
}


@dataclass
class Fault:
    """A pending injected failure."""

    kind: ErrorKind
    remaining: int
    after_output: tuple[str, ...] = ()
    message: str | None = None

    def message_for(self, tool: str) -> str:
        """The failure message, defaulting to a realistic one for the kind."""
        template = self.message or DEFAULT_MESSAGES.get(self.kind, "`{tool}`: " + self.kind.meaning)
        return template.format(tool=tool)


class Faults:
    """The faults injected into a registry's tools, consumed first in, first out."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, deque[Fault]] = {}

    def inject(
        self,
        tool: str,
        kind: str | ErrorKind,
        *,
        times: int = 1,
        after_output: str | list[str] | tuple[str, ...] | None = None,
        message: str | None = None,
    ) -> Fault:
        """Queue a fault for the next ``times`` calls of ``tool``."""
        if times < 1:
            raise ValueError("times must be at least 1")
        chunks = (after_output,) if isinstance(after_output, str) else tuple(after_output or ())
        fault = Fault(as_kind(kind), times, chunks, message)
        with self._lock:
            self._pending.setdefault(tool, deque()).append(fault)
        return fault

    def take(self, tool: str) -> Fault | None:
        """The fault for this call of ``tool``, if one is pending (and count it used)."""
        with self._lock:
            queue = self._pending.get(tool)
            if not queue:
                return None
            fault = queue[0]
            fault.remaining -= 1
            if fault.remaining <= 0:
                queue.popleft()
            return fault

    def waiting(self, tool: str) -> bool:
        """True when a fault is pending for ``tool`` (without using it)."""
        return bool(self._pending.get(tool))

    def clear(self, tool: str | None = None) -> None:
        """Forget pending faults, of one tool or all."""
        with self._lock:
            if tool is None:
                self._pending.clear()
            else:
                self._pending.pop(tool, None)

    def pending(self) -> dict[str, int]:
        """How many injected failures are still to come, per tool."""
        with self._lock:
            return {tool: sum(f.remaining for f in q) for tool, q in self._pending.items() if q}
