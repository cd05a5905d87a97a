"""The interruption a person sees when they stop a cell that waits on a call.

Ctrl-C in a script, or a kernel interrupt in a notebook, while ``call.wait()`` blocks ends the
call (like Ctrl-C on a foreground command). What is worth reading then is which call was
terminated, not the frames of the waiting machinery, so the exception carries one line.
"""

from __future__ import annotations


class CallInterrupted(KeyboardInterrupt):
    """A wait on a call was interrupted and the call was terminated.

    A ``KeyboardInterrupt``, so code that catches that still does. IPython shows the one line
    of :meth:`_render_traceback_` instead of a traceback.
    """

    def __init__(self, tool_name: str, call_id: str) -> None:
        super().__init__(f"interrupted: terminated the {tool_name} call {call_id}")
        self.tool_name = tool_name
        self.call_id = call_id

    def _render_traceback_(self) -> list[str]:
        return [f"KeyboardInterrupt: {self}"]


__all__ = ["CallInterrupted"]
