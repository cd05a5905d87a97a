"""Subprocesses that always end: each runs under its own supervisor, which outlives nothing.

Every command workbench starts runs under a small supervisor process (``_supervisor.py`` here),
a child subreaper on Linux: whatever the command starts stays in the supervisor's tree, even a
process that calls ``setsid``, double-forks or changes its process group. This module is the
Python side. It holds each supervisor's control pipe: closing it (``Supervision.stop``) makes
the supervisor end the whole tree (SIGTERM, SIGKILL after the grace). When this Python exits or
dies, even by SIGKILL, the operating system closes the pipes, so the trees end then too.

Supervisions are kept per owner (a registry), so ``end_owned_by(registry)`` ends every process
that registry's tools started, background jobs included.
"""

from __future__ import annotations

import atexit
import os
import select
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

TERMINATE_GRACE_S = 3.0
DRAIN_S = 0.5
SUPERVISOR = Path(__file__).with_name("_supervisor.py")
# Imported rather than run as a script, so its compiled bytecode is reused at every start.
_BOOT = (
    f"import sys; sys.path.insert(0, {str(SUPERVISOR.parent)!r}); "
    "import _supervisor; _supervisor.main(sys.argv[1:])"
)
Mode = Literal["call", "job"]


@dataclass(frozen=True)
class Report:
    """What a supervisor did: the leader's pid, leftovers it ended after a normal end, and how
    many processes a stop signalled."""

    leader: int | None = None
    leftovers: int = 0
    stopped: int = 0


class Supervision:
    """The handle on one supervisor: its argv to start, its control pipe, its report.

    Start the process with ``argv(command)`` and ``pass_fds=supervision.pass_fds``, then call
    ``started(pid)``. ``stop()`` may be called from any thread, any number of times.
    """

    def __init__(self, *, mode: Mode, grace: float, drain: float = DRAIN_S) -> None:
        self.mode = mode
        self.grace = grace
        self.drain = drain
        self.pid: int | None = None
        self._control_r, self._control_w = os.pipe()
        self._status_r, self._status_w = os.pipe()
        os.set_blocking(self._status_r, False)
        self._lock = threading.Lock()
        self._received = b""
        self._finished = False
        self._owners: list[Owner] = []

    @property
    def pass_fds(self) -> tuple[int, int]:
        """The descriptors the supervisor must inherit."""
        return (self._control_r, self._status_w)

    def argv(self, command: Sequence[str]) -> list[str]:
        """The argv that runs ``command`` under this supervisor."""
        options = {
            "--mode": self.mode,
            "--grace": f"{self.grace:g}",
            "--drain": f"{self.drain:g}",
            "--control": str(self._control_r),
            "--status": str(self._status_w),
        }
        flat = [item for pair in options.items() for item in pair]
        return [sys.executable, "-I", "-S", "-c", _BOOT, *flat, "--", *command]

    def started(self, pid: int, owner: Owner | None = None) -> None:
        """Note the supervisor's pid and let go of its ends of the pipes."""
        self.pid = pid
        for fd in (self._control_r, self._status_w):
            os.close(fd)
        LIVE.members()  # forget those that ended unobserved (a ctx.spawn nobody released)
        LIVE.add(self)
        if owner is not None:
            owner.add(self)
            self._owners.append(owner)

    def abandon(self) -> None:
        """Close every descriptor of a supervisor that failed to start."""
        for fd in (self._control_r, self._status_w, self._control_w, self._status_r):
            try:
                os.close(fd)
            except OSError:
                continue  # already closed by started()
        self._finished = True

    def stop(self) -> None:
        """Ask the supervisor to end the whole tree now (SIGTERM, SIGKILL after the grace)."""
        with self._lock:
            if self._control_w < 0:
                return
            os.close(self._control_w)
            self._control_w = -1

    def _read(self) -> None:
        with self._lock:
            if self._finished:
                return
            while True:
                try:
                    chunk = os.read(self._status_r, 4096)
                except BlockingIOError:
                    return
                if not chunk:
                    self._finished = True
                    os.close(self._status_r)
                    return
                self._received += chunk

    @property
    def finished(self) -> bool:
        """True once the supervisor exited, which it does only when its whole tree ended."""
        self._read()
        return self._finished

    def wait(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds until the supervisor exited; True when it did."""
        deadline = time.monotonic() + timeout
        while not self.finished:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                select.select([self._status_r], [], [], min(left, 0.1))
            except (OSError, ValueError):
                continue  # closed by another thread that saw the end first
        return True

    def report(self) -> Report:
        """What the supervisor has said so far."""
        self._read()
        fields: dict[str, int] = {}
        for line in self._received.decode("ascii", "replace").splitlines():
            name, _, value = line.partition(" ")
            if value.isdigit():
                fields[name] = int(value)
        return Report(fields.get("leader"), fields.get("left", 0), fields.get("stopped", 0))

    def release(self) -> None:
        """Forget a supervisor whose tree ended; stops it first if it had not."""
        self.stop()
        LIVE.discard(self)
        for owner in self._owners:
            owner.discard(self)


class Owner:
    """The supervisions one registry started and has not seen end."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._members: set[Supervision] = set()

    def add(self, supervision: Supervision) -> None:
        """Count ``supervision`` among this registry's until it ends or is discarded."""
        with self._lock:
            self._members.add(supervision)

    def discard(self, supervision: Supervision) -> None:
        """Forget ``supervision`` (one that ended); forgetting one not held does nothing."""
        with self._lock:
            self._members.discard(supervision)

    def members(self) -> list[Supervision]:
        """Those still running; finished ones are forgotten (and their pipes closed) on the
        way."""
        with self._lock:
            members = list(self._members)
        running = [member for member in members if not member.finished]
        ended = set(members) - set(running)
        for member in ended:
            member.stop()
        with self._lock:
            self._members.difference_update(ended)
        return running

    def end_all(self, timeout: float | None = None) -> int:
        """Stop every member and wait (up to ``timeout``, default each one's grace plus five
        seconds) until their trees ended; how many were stopped."""
        members = self.members()
        for member in members:
            member.stop()
        for member in members:
            member.wait(timeout if timeout is not None else member.grace + 5.0)
            member.release()
        return len(members)


LIVE = Owner()
_OWNERS: weakref.WeakKeyDictionary[Any, Owner] = weakref.WeakKeyDictionary()
_OWNERS_LOCK = threading.Lock()


def owner_for(key: Any) -> Owner:
    """The ``Owner`` of ``key`` (a registry), made on first use, dropped with the key."""
    with _OWNERS_LOCK:
        owner = _OWNERS.get(key)
        if owner is None:
            owner = _OWNERS[key] = Owner()
        return owner


def end_owned_by(key: Any, timeout: float | None = None) -> int:
    """End every process started on behalf of ``key`` and all their descendants; returns when
    they ended (bounded by the grace); how many supervised commands were stopped."""
    with _OWNERS_LOCK:
        owner = _OWNERS.get(key)
    return 0 if owner is None else owner.end_all(timeout)


def popen(
    args: Sequence[str] | str,
    *,
    mode: Mode = "call",
    grace: float = TERMINATE_GRACE_S,
    owner: Owner | None = None,
    on_cancel: Callable[[Callable[[], None]], object] | None = None,
    **options: Any,
) -> tuple[subprocess.Popen[bytes], Supervision]:
    """Start ``args`` under a supervisor with ``subprocess.Popen`` ``options``.

    The Popen's pid is the supervisor's; its return code is the command's, available once every
    process of the tree ended. ``on_cancel(stop)`` is called with the stop function, e.g. a
    call's ``ctx.on_cancel``.
    """
    if options.pop("shell", False):
        command = ["/bin/sh", "-c", args if isinstance(args, str) else " ".join(args)]
    else:
        command = [args] if isinstance(args, str) else list(args)
    supervision = Supervision(mode=mode, grace=grace)
    options["pass_fds"] = tuple(options.get("pass_fds", ())) + supervision.pass_fds
    options.pop("start_new_session", None)
    try:
        process: subprocess.Popen[bytes] = subprocess.Popen(
            supervision.argv(command), start_new_session=True, **options
        )
    except BaseException:
        supervision.abandon()
        raise
    supervision.started(process.pid, owner)
    if on_cancel is not None:
        on_cancel(supervision.stop)
    return process, supervision


def _stop_everything_at_exit() -> None:
    # The pipes would close anyway as this process ends; closing them first starts the
    # supervisors' grace at once rather than after the rest of interpreter shutdown.
    for supervision in LIVE.members():
        supervision.stop()


def _let_go_in_forked_child() -> None:
    # A fork of this Python (multiprocessing) must not keep the supervisors' control pipes
    # open: they would then outlive this process and its trees with them. No locks here: a
    # thread of the parent may have held one at the fork.
    for supervision in list(LIVE._members):
        open_fds = [supervision._control_w] if supervision._control_w >= 0 else []
        if not supervision._finished:
            open_fds.append(supervision._status_r)
        for fd in open_fds:
            os.close(fd)
        supervision._control_w = -1
        supervision._finished = True
        supervision._lock = threading.Lock()
    LIVE._members.clear()
    LIVE._lock = threading.Lock()


atexit.register(_stop_everything_at_exit)
os.register_at_fork(after_in_child=_let_go_in_forked_child)
