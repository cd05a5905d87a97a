"""Running commands for ``shell_exec``: in the foreground to the end, or as a background job.

Promises:

- The command runs as ``bash -c`` with ``set -o pipefail`` first, stdin closed, in a new
  session, so its process group holds every descendant; Terminate kills that group (SIGTERM,
  then SIGKILL after 3 s).
- stdout and stderr are read concurrently, chunk by chunk as the pipes deliver them (never line
  by line), on the event loop; each chunk goes to ``ctx.emit_bytes``, which keeps the complete
  bytes in the call's spools. Memory stays bounded however much the command prints.
- There is no wall-clock limit. ``timeout`` is an idle ceiling: it restarts with every byte of
  output; when it expires the group is killed and the call ends ``timeout`` with
  ``killed_by: "idle_timeout"``, keeping the output so far.
- A foreground command ends with its shell: processes it left running are stopped (with a
  warning), so nothing outlives the call unless it asked for ``background: true``.
- A non-zero exit is a result the model reads, not an error.
"""

from __future__ import annotations

import asyncio
import fcntl
import subprocess
import time

from workbench import _processes
from workbench._builders import failure
from workbench._context import ToolCancelled, ToolContext
from workbench._envelope import Envelope
from workbench._errors import ErrorKind
from workbench.builtins.jobs import Jobs, exit_status
from workbench.builtins.paths import Confined
from workbench.families.command import CommandOutput

DRAIN_S = 0.5
SETTLE_S = _processes.TERMINATE_GRACE_S + 1.0
INITIAL_CAP = 1 << 20
LEFTOVER_WARNING = (
    "the command left processes running after it ended; they were stopped (use "
    "background: true to keep a process running)"
)

_closing: set[asyncio.Task[None]] = set()


def bash_argv(command: str) -> list[str]:
    """The argv that runs ``command`` the way shell_exec does: bash with pipefail."""
    return ["bash", "-c", f"set -o pipefail\n{command}"]


PIPE_BYTES = 1 << 20


def _widen_pipes(transport: asyncio.SubprocessTransport) -> None:
    """Give stdout and stderr 1 MiB pipes (Linux): a fast writer then arrives in a few large
    chunks rather than many 64 KiB ones, and each chunk costs the same to forward."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is None:
        return
    for fd in (1, 2):
        pipe = transport.get_pipe_transport(fd)
        handle = None if pipe is None else pipe.get_extra_info("pipe")
        try:
            if handle is not None:
                fcntl.fcntl(handle.fileno(), set_size, PIPE_BYTES)
        except (OSError, ValueError):
            # Over the system's pipe-max-size, or already closed (a command that finished at
            # once): the default pipe works, just in more chunks.
            pass


class _Pipes(asyncio.SubprocessProtocol):
    """Forwards each chunk the pipes deliver to the call, as it arrives, and notes when."""

    def __init__(self, ctx: ToolContext, loop: asyncio.AbstractEventLoop) -> None:
        self.ctx = ctx
        self.loop = loop
        self.last_output = loop.time()
        self.exited_at: float | None = None
        self.exited: asyncio.Future[None] = loop.create_future()
        self.closed: dict[int, asyncio.Future[None]] = {
            1: loop.create_future(),
            2: loop.create_future(),
        }

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self.last_output = self.loop.time()
        self.ctx.emit_bytes(data, "stdout" if fd == 1 else "stderr")

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        future = self.closed.get(fd)
        if future is not None and not future.done():
            future.set_result(None)

    def process_exited(self) -> None:
        self.exited_at = self.loop.time()
        if not self.exited.done():
            self.exited.set_result(None)

    @property
    def pipes_closed(self) -> bool:
        return all(future.done() for future in self.closed.values())

    def waiting(self) -> set[asyncio.Future[None]]:
        return {future for future in (self.exited, *self.closed.values()) if not future.done()}

    async def settle(self, idle_timeout: float | None) -> str:
        """Wait until the shell exited and its pipes closed: "done"; or until no byte arrived
        for ``idle_timeout`` seconds: "idle"; or until the shell exited but descendants still
        held the pipes open ``DRAIN_S`` later: "leftovers"."""
        while True:
            pending = self.waiting()
            if not pending:
                return "done"
            now = self.loop.time()
            deadlines = []
            if idle_timeout is not None:
                deadlines.append(self.last_output + idle_timeout)
            if self.exited_at is not None:
                # Output still arriving after the shell exited comes from processes it left.
                deadlines.append(self.exited_at + DRAIN_S)
            if deadlines and min(deadlines) <= now:
                idle = idle_timeout is not None and self.last_output + idle_timeout <= now
                return "idle" if idle else "leftovers"
            wait = min(deadlines) - now if deadlines else None
            await asyncio.wait(pending, timeout=wait, return_when=asyncio.FIRST_COMPLETED)

    async def ended(self, timeout: float) -> None:
        """Wait (bounded) for the process to exit and the pipes to close."""
        pending = self.waiting()
        if pending:
            await asyncio.wait(pending, timeout=timeout)


def _close_when_ended(transport: asyncio.SubprocessTransport, pipes: _Pipes) -> None:
    async def close() -> None:
        try:
            await pipes.ended(SETTLE_S + 5.0)
        finally:
            transport.close()

    task = asyncio.get_running_loop().create_task(close())
    _closing.add(task)
    task.add_done_callback(_closing.discard)


async def run_foreground(
    ctx: ToolContext, command: str, cwd: Confined, idle_timeout: float | None
) -> CommandOutput | Envelope:
    """Run to the end and return the complete output (streams are in the call's spools), or
    an ``idle_timeout`` failure envelope."""
    if ctx.cancelled:
        raise ToolCancelled(ctx.token.reason or "cancelled")
    loop = asyncio.get_running_loop()
    started = loop.time()
    pipes = _Pipes(ctx, loop)
    _processes.prepare()
    transport, _ = await loop.subprocess_exec(
        lambda: pipes,
        *bash_argv(command),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd.real,
        start_new_session=True,
    )
    pgid = transport.get_pid()
    _processes.track(pgid)
    _widen_pipes(transport)
    remove = ctx.on_cancel(lambda: _processes.kill_group(pgid))
    finished = False
    warnings: list[str] = []
    try:
        outcome = await pipes.settle(idle_timeout)
        if outcome != "done" or _processes.group_running(pgid):
            _processes.kill_group(pgid)
            await pipes.ended(SETTLE_S)
            if outcome != "idle":
                warnings.append(LEFTOVER_WARNING)
        else:
            _processes.forget(pgid)
        finished = True
    finally:
        remove()
        if finished:
            transport.close()
        else:
            _processes.kill_group(pgid)
            _close_when_ended(transport, pipes)
    duration_ms = round((loop.time() - started) * 1000)
    exit_code, signal_name = exit_status(transport.get_returncode())
    if outcome == "idle":
        assert idle_timeout is not None
        return failure(
            ErrorKind.TIMEOUT,
            f"`{ctx.tool_name}` printed nothing for {idle_timeout:g} s (its idle timeout) and "
            "was stopped",
            tool=ctx.tool_name,
            details={"idle_timeout_s": idle_timeout, "cwd": cwd.display},
            recovery_hint="raise `timeout`, make the command print progress, or run it with "
            "background: true",
        ).replace(killed_by="idle_timeout")
    return CommandOutput(
        command=command,
        cwd=cwd.display,
        exit_code=exit_code,
        duration_ms=duration_ms,
        signal=signal_name,
        warnings=tuple(warnings),
    )


async def start_background(
    ctx: ToolContext, jobs: Jobs, command: str, cwd: Confined, window: float
) -> CommandOutput:
    """Start a detached job and return after ``window`` seconds (or when it exits), with the
    output of that first moment streamed to the call."""
    if ctx.cancelled:
        raise ToolCancelled(ctx.token.reason or "cancelled")
    started = time.monotonic()
    log_file = ctx.artifacts.store.new_path(ctx.call_id, "background.log")
    job = jobs.start(
        bash_argv(command),
        command=command,
        cwd=cwd.real,
        cwd_display=cwd.display,
        log_file=log_file,
    )
    remove = ctx.on_cancel(lambda: jobs.kill(job))
    shown = 0
    try:
        with log_file.open("rb") as log:
            while True:
                exited = job.returncode() is not None
                while shown < INITIAL_CAP and (chunk := log.read(INITIAL_CAP - shown)):
                    shown += len(chunk)
                    ctx.emit_bytes(chunk, "stdout")
                if exited or time.monotonic() - started >= window:
                    break
                await asyncio.sleep(0.05)
    finally:
        remove()
    exit_code, signal_name = exit_status(job.returncode() if exited else None)
    return CommandOutput(
        command=command,
        cwd=cwd.display,
        exit_code=exit_code,
        duration_ms=round((time.monotonic() - started) * 1000),
        signal=signal_name,
        background=True,
        pid=job.pid,
        log_file=log_file,
        log_size=shown,
    )
