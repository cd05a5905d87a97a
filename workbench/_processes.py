"""Subprocesses that can always be stopped: own process group, SIGTERM then SIGKILL, no orphans.

Every process workbench starts is the leader of a new session, so a signal to its group reaches
its children and grandchildren. Groups are tracked: on interpreter exit they are ended, and a
watchdog process (``workbench._reaper``) ends them even if this Python is killed outright.
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

TERMINATE_GRACE_S = 3.0


class _Tracker:
    """The process groups this Python started and has not seen end."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._groups: set[int] = set()
        self._reaper: subprocess.Popen[bytes] | None = None
        self._reaper_pid = os.getpid()

    def _reaper_stdin(self) -> IO[bytes] | None:
        if (
            self._reaper is None
            or self._reaper_pid != os.getpid()
            or self._reaper.poll() is not None
        ):
            # Run the file itself, isolated and without site: it starts in milliseconds and never
            # imports the workbench package, so it is watching before anything can die.
            self._reaper = subprocess.Popen(
                [sys.executable, "-I", "-S", str(Path(__file__).with_name("_reaper.py"))],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            self._reaper_pid = os.getpid()
            for pgid in self._groups:
                self._tell(f"+{pgid}")
        return self._reaper.stdin

    def _tell(self, line: str) -> None:
        stdin = self._reaper.stdin if self._reaper is not None else None
        if stdin is None:
            return
        try:
            stdin.write(f"{line}\n".encode())
            stdin.flush()
        except OSError:
            pass

    def add(self, pgid: int) -> None:
        with self._lock:
            self._groups.add(pgid)
            self._reaper_stdin()
            self._tell(f"+{pgid}")

    def discard(self, pgid: int) -> None:
        with self._lock:
            if pgid in self._groups:
                self._groups.discard(pgid)
                self._tell(f"-{pgid}")

    def groups(self) -> set[int]:
        with self._lock:
            return set(self._groups)


TRACKER = _Tracker()


def group_alive(pgid: int) -> bool:
    """True while any process of the group exists (zombies of our own children included)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def prepare() -> None:
    """Make sure the watchdog runs before a process starts, so none can outlive us unwatched."""
    with TRACKER._lock:
        TRACKER._reaper_stdin()


def group_running(pgid: int) -> bool:
    """True while a process of the group runs; zombies waiting to be reaped do not count."""
    if not group_alive(pgid):
        return False  # gone for certain: the usual case, without reading /proc
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def track(pgid: int) -> None:
    """Remember a process group so it is ended if this Python exits or dies."""
    TRACKER.add(pgid)


def forget(pgid: int) -> None:
    """Stop tracking a group that has ended."""
    TRACKER.discard(pgid)


def signal_group(pgid: int, signum: int) -> bool:
    """Send a signal to every process of a group; False when the group is gone."""
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def kill_group(
    pgid: int,
    *,
    grace: float = TERMINATE_GRACE_S,
    reap: subprocess.Popen[bytes] | None = None,
) -> None:
    """SIGTERM the group now; SIGKILL whatever is left after ``grace`` seconds (in a timer
    thread, so the caller never blocks). ``reap`` is the leader, waited for to avoid a zombie."""
    if not signal_group(pgid, signal.SIGTERM):
        forget(pgid)
        return

    def finish() -> None:
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if reap is not None:
                reap.poll()
            if not group_running(pgid):
                break
            time.sleep(0.02)
        else:
            signal_group(pgid, signal.SIGKILL)
        if reap is not None:
            try:
                reap.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                pass
        forget(pgid)

    threading.Thread(target=finish, name=f"workbench-kill-{pgid}", daemon=True).start()


def _end_all_at_exit() -> None:
    groups = TRACKER.groups()
    for pgid in groups:
        signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline and any(group_alive(pgid) for pgid in groups):
        time.sleep(0.02)
    for pgid in groups:
        signal_group(pgid, signal.SIGKILL)


atexit.register(_end_all_at_exit)
