"""What the runtime hands a tool body that asks for it: ``ToolContext`` and its cancellation token.

A parameter annotated ``wb.ToolContext`` is injected by the runtime and never appears in a
schema, an export, a receipt or the history: a value the runtime hands in, hidden from models.
"""

from __future__ import annotations

import codecs
import subprocess
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workbench.context import _processes
from workbench.output import Stream

if TYPE_CHECKING:
    from workbench.output import ArtifactSink


class ToolCancelled(Exception):  # a signal to unwind, like asyncio.CancelledError
    """Raised by ``ctx.check_cancelled()`` inside a tool whose call was terminated or timed out."""


class CancellationToken:
    """A thread-safe, idempotent cancellation flag shared by every runner of one call.

    ``cancel`` may be called from any thread, any number of times; callbacks run once, on the
    first cancel, and a callback added after cancellation runs at once.
    """

    def __init__(self) -> None:
        self._cancelled = False
        self._event: threading.Event | None = None  # made only for someone who waits
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], object]] = []
        self.reason: str | None = None
        self.failures: list[str] = []

    @property
    def cancelled(self) -> bool:
        """True once ``cancel`` was called."""
        return self._cancelled

    def cancel(self, reason: str = "user") -> bool:
        """Cancel; True the first time, False when already cancelled."""
        with self._lock:
            if self._cancelled:
                return False
            self.reason = reason
            self._cancelled = True
            if self._event is not None:
                self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            try:
                callback()
            except Exception as exc:  # a failing callback must not stop the others
                self.failures.append(f"a cancellation callback failed: {exc!r}")
                warnings.warn(self.failures[-1], RuntimeWarning, stacklevel=2)
        return True

    def on_cancel(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Run ``callback`` on cancellation; returns a function that removes it again."""
        with self._lock:
            if not self._cancelled:
                self._callbacks.append(callback)

                def remove() -> None:
                    with self._lock:
                        if callback in self._callbacks:
                            self._callbacks.remove(callback)

                return remove
        callback()
        return lambda: None

    def wait(self, timeout: float | None = None) -> bool:
        """Block until cancelled or ``timeout`` passes; True when cancelled."""
        with self._lock:
            if self._cancelled:
                return True
            if self._event is None:
                self._event = threading.Event()
            event = self._event
        return event.wait(timeout)


class ToolContext:
    """The runtime's handle for one call, injected into tools that declare a parameter of this type.

    It carries the call id, a stream writer (``emit``), the cancellation state, an artifact sink
    for large outputs, and the registry's secrets.

    Examples:
        >>> import workbench as wb
        >>> tools = wb.Registry(history=":memory:")
        >>> @tools.tool
        ... def build(steps: int, ctx: wb.ToolContext) -> str:
        ...     '''Build in steps, saying how far it got.'''
        ...     for step in range(steps):
        ...         ctx.check_cancelled()  # ends the call here once it is terminated
        ...         ctx.log(f"step {step + 1}")
        ...         ctx.progress(step + 1, steps)
        ...     return "built"
        >>> call = tools.invoke("build", {"steps": 2})
        >>> call.wait().status, call.output("log")
        ('success', 'step 1\\nstep 2\\n')
        >>> tools.close()
    """

    def __init__(
        self,
        *,
        call_id: str,
        tool_name: str,
        emit: Callable[[str, Stream, bytes | None], None],
        token: CancellationToken,
        artifacts: ArtifactSink,
        secrets: Mapping[str, str],
        invoke: Callable[..., Any] | None = None,
        report: Callable[[float, float | None, str | None], None] | None = None,
    ) -> None:
        self.call_id = call_id
        self.tool_name = tool_name
        self.token = token
        self.artifacts = artifacts
        self.secrets = secrets
        self._emit = emit
        self._invoke = invoke
        self._report = report
        self._decoders: dict[str, codecs.IncrementalDecoder] = {}
        self._stops: list[Callable[[], None]] = []

    @property
    def cancelled(self) -> bool:
        """True once the call was terminated or ran out of time; a thread tool should stop."""
        return self.token.cancelled

    def emit(self, text: str, stream: Stream = "stdout") -> None:
        """Stream a chunk of output to the call's card and history (a ``tool.output`` event)."""
        if text:
            self._emit(text, stream, None)

    def emit_bytes(self, data: bytes, stream: Stream = "stdout") -> None:
        """Stream raw bytes (a subprocess pipe): kept byte for byte in the stream's artifact,
        decoded as UTF-8 for the event (a character split across chunks is kept whole)."""
        decoder = self._decoders.get(stream)
        if decoder is None:
            decoder = self._decoders[stream] = codecs.getincrementaldecoder("utf-8")("replace")
        if data:
            self._emit(decoder.decode(data), stream, data)

    def log(self, text: str) -> None:
        """Stream a line on the ``log`` stream."""
        self._emit(text if text.endswith("\n") else text + "\n", "log", None)

    def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Say how far the call has come: a ``tool.progress`` event (``done``, ``total``,
        ``message``), drawn as a bar on the call's card and kept in its history row. ``total``
        None draws a bar that only counts. Raises ``ValueError`` for a value that is not a
        finite number, or a ``total`` that is not positive."""
        if self._report is None:
            raise RuntimeError("this ToolContext belongs to no call")
        self._report(done, total, message)

    def invoke(self, name: str, args: Any = None) -> Any:
        """Call another tool of the same registry from inside this one: the new call is this
        call's child (recorded with its parent's id) and runs in this call's concurrency slot,
        so tools that call tools never deadlock. Returns the child Call: ``.wait()`` it in a
        ``def`` tool, ``await`` it in an ``async def`` tool."""
        if self._invoke is None:
            raise RuntimeError("this ToolContext belongs to no registry")
        return self._invoke(name, args)

    def check_cancelled(self) -> None:
        """Raise ``ToolCancelled`` when the call was cancelled; a cheap point to stop at."""
        if self.token.cancelled:
            raise ToolCancelled(self.token.reason or "cancelled")

    def on_cancel(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Run ``callback`` (from any thread) when the call is cancelled, e.g. to kill a process."""
        return self.token.on_cancel(callback)

    def spawn(self, args: Sequence[str] | str, **popen: Any) -> subprocess.Popen[bytes]:
        """Start a subprocess that ends with the call: under a supervisor that keeps every
        descendant (even one that calls ``setsid``), so Terminate, a timeout, or the kernel
        exiting or dying end them all (SIGTERM, then SIGKILL after a 3 s grace). The Popen's
        pid is the supervisor's; its return code is the command's."""
        process, supervision = _processes.popen(args, on_cancel=self.on_cancel, **popen)
        self._stops.append(supervision.stop)
        return process

    def end_processes(self) -> None:
        """End every process ``spawn`` started that still runs, with its descendants (for the
        runtime, when the call ends); returns at once."""
        for stop in self._stops:
            stop()

    def __repr__(self) -> str:
        return f"ToolContext(call_id={self.call_id!r}, tool={self.tool_name!r})"
