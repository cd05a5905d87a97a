"""The lifecycle's steps for a call run inline (on a thread that waits for it, in a lane, on the
loop that awaits it): admitted and begun, its body run with the call made current, and what the
body raises made its envelope, as on a worker."""

from __future__ import annotations

from contextvars import Token
from typing import TYPE_CHECKING, Any

from workbench.envelope import Envelope
from workbench.runtime.steps._body import CURRENT_CALL
from workbench.runtime.steps._lifecycle import admit, begin
from workbench.runtime.steps._outcome import body_failure, returned, stopped_envelope

if TYPE_CHECKING:
    from workbench.declare import Tool
    from workbench.runtime.call import Call


def admitted_arguments(call: Call, tool: Tool) -> tuple[Tool, dict[str, Any]] | Envelope:
    """The steps before a body run inline: the tool and the arguments to bind, once the call
    was admitted and begun; or the envelope it ends with instead (stopped, refused)."""
    control = call.sheet.control
    call.sheet.asked.spec = tool.spec  # a stopped call's envelope names the tool's time budget
    if control.reason is not None:
        return stopped_envelope(call, control.reason)
    admitted = admit(call)
    if isinstance(admitted, Envelope):
        return admitted
    arguments = call.sheet.asked.arguments or {}
    begin(call, arguments)
    return admitted, arguments


class InlineBody:
    """A body run inline, as a ``with`` block around binding and running it.

    Inside the block the call is the current one (``current_call()``, the parent of any call
    the body makes). What the block raises becomes the call's result, as on a worker:
    ``envelope`` then returns ``body_failure``'s envelope, and the exception goes no further,
    except an instance of ``passing``, which goes on up to the driver that ran the body. The
    block sets ``value`` to what the body returned."""

    __slots__ = ("_reset", "call", "failure", "passing", "value")

    def __init__(self, call: Call, *, passing: tuple[type[BaseException], ...]) -> None:
        self.call = call
        self.passing = passing
        self.value: Any = None
        self.failure: Envelope | None = None

    def __enter__(self) -> InlineBody:
        self._reset: Token[Call | None] = CURRENT_CALL.set(self.call)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, trace: object
    ) -> bool:
        try:
            if exc is None or isinstance(exc, self.passing):
                return False
            self.failure = body_failure(self.call, exc)
            return True
        finally:
            CURRENT_CALL.reset(self._reset)

    def envelope(self, tool: Tool) -> Envelope:
        """The call's envelope once the block ended: its failure, or the value it returned."""
        if self.failure is not None:
            return self.failure
        return returned(self.call, tool, self.value)
