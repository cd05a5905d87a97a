"""Background jobs: commands ``shell_exec`` started with ``background: true``.

A job runs detached from the call that started it, under its own supervisor (its pid is the
job's pid), its stdout and stderr appended to one log file under the artifacts directory. It
runs as long as any of its processes runs. The ``Jobs`` table belongs to one ``register`` of the
built-ins, so the ``process`` tool reaches only jobs that registry started. ``kill``, the
registry's ``close`` and the end of this Python (even by SIGKILL) end a job and every process it
started.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from workbench.context import TERMINATE_GRACE_S, Owner, Supervision, popen

POLL_S = 0.05


def exit_status(returncode: int | None) -> tuple[int | None, str | None]:
    """A Popen return code as the shell reports it: death by signal N is ``128 + N``."""
    if returncode is None or returncode >= 0:
        return returncode, None
    number = -returncode
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    return 128 + number, name


@dataclass
class Job:
    """One background command."""

    pid: int
    command: str
    cwd: str
    log_file: Path
    process: subprocess.Popen[bytes]
    supervision: Supervision
    started_at: float
    killed: bool = False

    def returncode(self) -> int | None:
        """The command's return code once every process of the job ended, None while any runs
        (never blocks)."""
        returncode = self.process.poll()
        if returncode is not None:
            self.supervision.release()
        return returncode

    def log_size(self) -> int:
        """Bytes in the log so far."""
        try:
            return self.log_file.stat().st_size
        except FileNotFoundError:
            return 0


class Jobs:
    """The background jobs of one registry's built-ins, by pid; ``owner`` and ``grace`` are the
    registry's, and apply to every process the built-ins start."""

    def __init__(self, owner: Owner | None = None, grace: float = TERMINATE_GRACE_S) -> None:
        self.owner = owner if owner is not None else Owner()
        self.grace = grace
        self._jobs: dict[int, Job] = {}
        self._lock = threading.Lock()

    def start(
        self, script: list[str], *, command: str, cwd: Path, cwd_display: str, log_file: Path
    ) -> Job:
        """Spawn a detached job writing to ``log_file``; returns at once."""
        with log_file.open("ab") as log:
            process, supervision = popen(
                script,
                mode="job",
                grace=self.grace,
                owner=self.owner,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=cwd,
            )
        job = Job(process.pid, command, cwd_display, log_file, process, supervision, time.time())
        with self._lock:
            self._jobs[job.pid] = job
        return job

    def get(self, pid: int) -> Job | None:
        """The job with this pid, if this table started it."""
        with self._lock:
            return self._jobs.get(pid)

    def pids(self) -> list[int]:
        """Pids of every job started, oldest first."""
        with self._lock:
            return list(self._jobs)

    def __iter__(self) -> Iterator[Job]:
        with self._lock:
            return iter(list(self._jobs.values()))

    def kill(self, job: Job) -> bool:
        """End the job and every process it started (SIGTERM, SIGKILL after the grace); False
        when it had ended. Returns at once."""
        if job.returncode() is not None:
            return False
        job.killed = True
        job.supervision.stop()
        return True

    async def wait(self, job: Job, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the leader to exit, without blocking the loop;
        True when it did."""
        deadline = time.monotonic() + timeout
        while job.returncode() is None:
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(POLL_S)
        return True

    def close(self) -> None:
        """End every job still running and wait (bounded by the grace) until they ended."""
        running = [job for job in self if self.kill(job)]
        for job in running:
            try:
                job.process.wait(self.grace + 2.0)
            except subprocess.TimeoutExpired:
                continue  # its supervisor keeps killing; it ends when the tree does
            job.supervision.release()
