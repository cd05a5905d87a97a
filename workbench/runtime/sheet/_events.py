"""Lifecycle events of a call, in the order a card and the history see them."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

EventType = Literal[
    "tool.queued",
    "tool.approval_requested",
    "tool.approved",
    "tool.modified",
    "tool.denied",
    "tool.decision_set_aside",
    "tool.input_requested",
    "tool.fulfilled",
    "tool.started",
    "tool.output",
    "tool.progress",
    "tool.warning",
    "tool.completed",
    "tool.failed",
    "tool.terminated",
]

TERMINAL_EVENTS: frozenset[str] = frozenset({"tool.completed", "tool.failed", "tool.terminated"})


@dataclass(frozen=True, slots=True)
class Event:
    """One timestamped lifecycle event of a call.

    ``tool.output`` events carry ``data = {"stream": "stdout" | "stderr" | "log", "text": ...}``;
    ``tool.progress`` events ``{"done": ..., "total": ... or None, "message": ... or None}``.
    """

    type: EventType
    call_id: str
    at: float = field(default_factory=time.time)
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def stream(self) -> str | None:
        """The stream of an output event."""
        stream = self.data.get("stream")
        return stream if isinstance(stream, str) else None

    @property
    def text(self) -> str:
        """The text of an output event ('' for other events)."""
        text = self.data.get("text", "")
        return text if isinstance(text, str) else ""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form for the history."""
        return {"type": self.type, "at": self.at, **self.data}
