"""Background jobs: commands ``shell_exec`` started with ``background: true``.

A job runs detached from the call that started it, in its own process group, its stdout and
stderr appended to one log file under the artifacts directory. The ``Jobs`` table belongs to one
``register`` of the built-ins, so the ``process`` tool reaches only jobs that registry started.
Jobs are tracked like every workbench process group: they end when this Python exits.
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

from workbench import _processes

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
    started_at: float
    killed: bool = False

    def returncode(self) -> int | None:
        """The leader's return code, None while it runs (never blocks)."""
        return self.process.poll()

    def log_size(self) -> int:
        """Bytes in the log so far."""
        try:
            return self.log_file.stat().st_size
        except FileNotFoundError:
            return 0


class Jobs:
    """The background jobs of one registry's built-ins, by pid."""

    def __init__(self) -> None:
        self._jobs: dict[int, Job] = {}
        self._lock = threading.Lock()

    def start(
        self, script: list[str], *, command: str, cwd: Path, cwd_display: str, log_file: Path
    ) -> Job:
        """Spawn a detached job writing to ``log_file``; returns at once."""
        _processes.prepare()
        with log_file.open("ab") as log:
            process = subprocess.Popen(
                script,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                start_new_session=True,
            )
        _processes.track(process.pid)
        job = Job(process.pid, command, cwd_display, log_file, process, time.time())
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

    def kill(self, job: Job, grace: float = _processes.TERMINATE_GRACE_S) -> bool:
        """SIGTERM the job's whole group, SIGKILL after ``grace``; False when it had ended."""
        if job.returncode() is not None and not _processes.group_running(job.pid):
            return False
        job.killed = True
        _processes.kill_group(job.pid, grace=grace, reap=job.process)
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
        """Kill every job still running (used when the built-ins are discarded)."""
        for job in self:
            self.kill(job)
