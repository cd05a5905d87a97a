"""Running commands for ``shell_exec``: in the foreground to the end, or as a background job.

Promises:

- The command runs as ``bash -c`` with ``set -o pipefail`` first, stdin closed, under its own
  supervisor (``workbench.context``): every process it starts stays in the supervisor's tree,
  even one that calls ``setsid``, double-forks or changes its process group. Terminate, the
  wall-clock and idle timeouts and the registry's ``close`` end that whole tree (SIGTERM, then
  SIGKILL after the registry's ``terminate_grace``). The supervisor itself is only ever ended
  through its control pipe, never signalled: a supervisor killed before it ended its tree
  would leave that tree to init, still running.
- stdout and stderr are read concurrently, chunk by chunk as the pipes deliver them (never line
  by line), on the event loop; each chunk goes to ``ctx.emit_bytes``, which keeps the complete
  bytes in the call's spools. Memory stays bounded however much the command prints.
- There is no wall-clock limit. ``timeout`` is an idle ceiling: it restarts with every byte of
  output; when it expires the tree is ended and the call ends ``timeout`` with
  ``killed_by: "idle_timeout"``, keeping the output so far.
- A foreground command ends with its shell: processes it left running half a second later are
  stopped, and a warning names how many, so nothing outlives the call unless it asked for
  ``background: true``.
- A non-zero exit is a result the model reads, not an error.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import subprocess
import time
from functools import partial
from typing import IO

from workbench.builtins.jobs import Jobs, exit_status
from workbench.builtins.paths import Confined
from workbench.context import Supervision, ToolCancelled, ToolContext, popen
from workbench.envelope import Envelope, ErrorKind, failure
from workbench.families.command import CommandOutput

DRAIN_S = 0.5
INITIAL_CAP = 1 << 20
ESCAPED_WARNING = (
    "the command's output pipes stayed open after its supervisor ended: a process outside its "
    "tree still holds them"
)


def leftover_warning(count: int) -> str:
    """The warning of a foreground command that left ``count`` processes running."""
    noun = "process" if count == 1 else "processes"
    return (
        f"the command left {count} {noun} running after it ended; they were stopped (use "
        "background: true to keep a process running)"
    )


_closing: set[asyncio.Task[None]] = set()


def bash_argv(command: str) -> list[str]:
    """The argv that runs ``command`` the way shell_exec does: bash with pipefail."""
    return ["bash", "-c", f"set -o pipefail\n{command}"]


PIPE_BYTES = 1 << 20
EXIT_POLL_S = 0.05
"""How often a supervisor's exit is checked where Linux cannot say it (no pidfd)."""


def _widen_pipes(process: subprocess.Popen[bytes]) -> None:
    """Give stdout and stderr 1 MiB pipes (Linux): a fast writer then arrives in a few large
    chunks rather than many 64 KiB ones, and each chunk costs the same to forward."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is None:
        return
    for pipe in (process.stdout, process.stderr):
        try:
            if pipe is not None:
                fcntl.fcntl(pipe.fileno(), set_size, PIPE_BYTES)
        except (OSError, ValueError):
            # Over the system's pipe-max-size, or already closed (a command that finished at
            # once): the default pipe works, just in more chunks.
            pass


class _Reader(asyncio.Protocol):
    """One output pipe of the command, forwarded to ``_Pipes`` as file descriptor ``fd``."""

    def __init__(self, pipes: _Pipes, fd: int) -> None:
        self.pipes = pipes
        self.fd = fd

    def data_received(self, data: bytes) -> None:
        self.pipes.pipe_data_received(self.fd, data)

    def eof_received(self) -> bool:
        return False  # close the transport: connection_lost says the pipe is done

    def connection_lost(self, exc: Exception | None) -> None:
        self.pipes.pipe_connection_lost(self.fd, exc)


class _Pipes:
    """Forwards each chunk the pipes deliver to the call, as it arrives, and notes when the
    supervisor exited (a pidfd says so at once; elsewhere it is polled)."""

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
        self._transports: list[asyncio.BaseTransport] = []
        self._files: list[IO[bytes]] = []
        self._pidfd: int | None = None
        self._poll: asyncio.TimerHandle | None = None

    async def attach(self, process: subprocess.Popen[bytes]) -> None:
        """Read the process's stdout and stderr, and watch for its exit."""
        self._files = [pipe for pipe in (process.stdout, process.stderr) if pipe is not None]
        self._watch_exit(process)
        for fd, pipe in ((1, process.stdout), (2, process.stderr)):
            transport, _ = await self.loop.connect_read_pipe(partial(_Reader, self, fd), pipe)
            self._transports.append(transport)

    def _watch_exit(self, process: subprocess.Popen[bytes]) -> None:
        try:
            self._pidfd = os.pidfd_open(process.pid)
        except (AttributeError, OSError):
            self._pidfd = None
        if self._pidfd is not None:
            self.loop.add_reader(self._pidfd, self._check_exit, process)
        else:
            self._check_exit(process)

    def _check_exit(self, process: subprocess.Popen[bytes]) -> None:
        if process.poll() is None:  # reaps the supervisor once it exited
            if self._pidfd is None:
                self._poll = self.loop.call_later(EXIT_POLL_S, self._check_exit, process)
            return
        self._unwatch()
        self.exited_at = self.loop.time()
        if not self.exited.done():
            self.exited.set_result(None)

    def _unwatch(self) -> None:
        if self._pidfd is not None:
            self.loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None
        if self._poll is not None:
            self._poll.cancel()
            self._poll = None

    def close(self) -> None:
        """Stop reading and watching. Never signals the supervisor: only its control pipe ends
        it, so the tree it keeps ends with it (a SIGKILL would orphan the tree)."""
        self._unwatch()
        for transport in self._transports:
            transport.close()
        for file in self._files:  # a pipe a stop interrupted before it was read from
            file.close()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self.last_output = self.loop.time()
        self.ctx.emit_bytes(data, "stdout" if fd == 1 else "stderr")

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        future = self.closed.get(fd)
        if future is not None and not future.done():
            future.set_result(None)

    @property
    def pipes_closed(self) -> bool:
        return all(future.done() for future in self.closed.values())

    def waiting(self) -> set[asyncio.Future[None]]:
        return {future for future in (self.exited, *self.closed.values()) if not future.done()}

    async def settle(self, idle_timeout: float | None) -> str:
        """Wait until the supervisor exited (its whole tree ended) and the pipes closed: "done";
        or until no byte arrived for ``idle_timeout`` seconds: "idle"; or until the supervisor
        exited but something outside its tree still held the pipes ``DRAIN_S`` later:
        "escaped"."""
        while True:
            pending = self.waiting()
            if not pending:
                return "done"
            now = self.loop.time()
            deadlines = []
            if idle_timeout is not None:
                deadlines.append(self.last_output + idle_timeout)
            if self.exited_at is not None:
                # The supervisor exits only when its tree ended: open pipes now mean an escape.
                deadlines.append(self.exited_at + DRAIN_S)
            if deadlines and min(deadlines) <= now:
                idle = idle_timeout is not None and self.last_output + idle_timeout <= now
                return "idle" if idle else "escaped"
            wait = min(deadlines) - now if deadlines else None
            await asyncio.wait(pending, timeout=wait, return_when=asyncio.FIRST_COMPLETED)

    async def ended(self, timeout: float) -> None:
        """Wait (bounded) for the process to exit and the pipes to close."""
        pending = self.waiting()
        if pending:
            await asyncio.wait(pending, timeout=timeout)


def _close_when_ended(pipes: _Pipes, supervision: Supervision, grace: float) -> None:
    """Once a stopped command's tree ended, stop reading it and forget its supervisor."""

    async def close() -> None:
        try:
            await pipes.ended(grace + 5.0)
        finally:
            pipes.close()
            supervision.release()

    task = asyncio.get_running_loop().create_task(close())
    _closing.add(task)
    task.add_done_callback(_closing.discard)


async def run_foreground(
    ctx: ToolContext, command: str, cwd: Confined, idle_timeout: float | None, jobs: Jobs
) -> CommandOutput | Envelope:
    """Run to the end and return the complete output (streams are in the call's spools), or
    an ``idle_timeout`` failure envelope.

    The supervisor is started without an await, so a stop that arrives at any moment finds
    it owned and ends it through its control pipe (the only way it is ever ended).
    """
    if ctx.cancelled:
        raise ToolCancelled(ctx.token.reason or "cancelled")
    loop = asyncio.get_running_loop()
    started = loop.time()
    pipes = _Pipes(ctx, loop)
    process, supervision = popen(
        bash_argv(command),
        grace=jobs.grace,
        owner=jobs.owner,
        on_cancel=ctx.on_cancel,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd.real,
    )
    _widen_pipes(process)
    finished = False
    warnings: list[str] = []
    try:
        await pipes.attach(process)
        outcome = await pipes.settle(idle_timeout)
        if outcome != "done":
            supervision.stop()
            await pipes.ended(jobs.grace + 2.0)
        finished = True
    finally:
        if finished:
            pipes.close()
            supervision.release()
        else:
            supervision.stop()
            _close_when_ended(pipes, supervision, jobs.grace)
    leftovers = supervision.report().leftovers
    if leftovers:
        warnings.append(leftover_warning(leftovers))
    if outcome == "escaped":
        warnings.append(ESCAPED_WARNING)
    duration_ms = round((loop.time() - started) * 1000)
    exit_code, signal_name = exit_status(process.returncode)
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
