"""The ``process`` built-in: poll, wait for, or kill a background job ``shell_exec`` started.

Only jobs of this registry's built-ins are reachable; any other pid is ``invalid_args`` on
``pid`` naming the jobs that exist. Results are command-family job snapshots (``JobStatus``):
running or exit code, and the head and tail of the log as it was at that moment.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Annotated, Literal

from pydantic import Field

from workbench.builtins.jobs import Job, Jobs, exit_status
from workbench.envelope import ErrorKind, ToolFailure
from workbench.families.command import JobAction, JobStatus

MAX_WAIT_S = 600.0
Process = Callable[..., Awaitable[JobStatus]]


def _snapshot(
    job: Job, action: JobAction, *, waited_ms: int | None = None, killed: bool = False
) -> JobStatus:
    returncode = job.returncode()
    exit_code, signal_name = exit_status(returncode)
    return JobStatus(
        action=action,
        pid=job.pid,
        command=job.command,
        cwd=job.cwd,
        running=returncode is None,
        exit_code=exit_code,
        log_file=job.log_file,
        log_size=job.log_size(),
        signal=signal_name,
        waited_ms=waited_ms,
        killed=killed,
    )


def make_process(jobs: Jobs) -> Process:
    """The ``process`` body, bound to a job table."""

    async def process(
        action: Literal["poll", "wait", "kill"],
        pid: int,
        timeout: Annotated[float, Field(gt=0, le=MAX_WAIT_S)] = 30.0,
    ) -> JobStatus:
        """Check on, wait for, or stop a background task started by shell_exec.

        Args:
            action: "poll" reports whether it runs and the head and tail of its output; "wait"
                waits until it exits (at most `timeout` seconds); "kill" stops it and every
                process it started.
            pid: The task's pid, as shell_exec printed it ("Task: 4242").
            timeout: For "wait": the most seconds to wait (default 30, at most 600).
        """
        job = jobs.get(pid)
        if job is None:
            known = ", ".join(str(p) for p in jobs.pids()) or "none yet"
            raise ToolFailure(
                ErrorKind.INVALID_ARGS,
                f"No background task with pid {pid} was started by shell_exec here; "
                f"the tasks it started: {known}.",
                field="pid",
                expected="the pid of a task started by shell_exec with background: true",
            )
        if action == "poll":
            return _snapshot(job, "poll")
        if action == "wait":
            started = time.monotonic()
            await jobs.wait(job, timeout)
            return _snapshot(job, "wait", waited_ms=round((time.monotonic() - started) * 1000))
        killed = jobs.kill(job)
        if killed:
            await jobs.wait(job, jobs.grace + 1.0)
        return _snapshot(job, "kill", killed=killed)

    return process
