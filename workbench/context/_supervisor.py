"""The supervisor: one small process per started command that makes sure its whole tree ends.

Run by ``_processes.py`` as ``python -I -S -c "... _supervisor.main(sys.argv[1:])" OPTIONS
-- ARGV``: it needs nothing but the standard library (not even the workbench package) and starts
in milliseconds. It becomes a child subreaper
(``prctl(PR_SET_CHILD_SUBREAPER)`` on Linux), starts ``ARGV`` as the leader of a new session with
the supervisor's own stdin, stdout and stderr, then lets go of those three. Every process the
command starts, however it detaches (``setsid``, a double fork, ``setpgid``, ``nohup``,
``disown``), stays a descendant of the supervisor: an orphan is re-parented to it rather than to
init. So the supervisor can always list the tree from ``/proc`` and end it.

It ends the tree (SIGTERM to every descendant, SIGKILL to whatever is left after ``--grace``
seconds, repeated until no descendant is left) when:

- its control pipe (``--control FD``) reaches end of file: the Python that started it closed it
  (terminate, timeout, registry close, interpreter exit) or died, even by SIGKILL;
- it receives SIGTERM;
- in ``--mode call``, the leader exited and descendants were still running ``--drain`` seconds
  later (leftovers of a foreground command).

In ``--mode job`` (a background job) descendants may outlive the leader; the supervisor stays as
long as any of them runs. It exits once no descendant is left, with the leader's exit status
(re-raising the signal that killed the leader), and writes what it did as lines to the status
pipe (``--status FD``): ``leader PID``, ``left N`` (leftovers ended after a normal end),
``stopped N`` (processes signalled by a stop).
"""

from __future__ import annotations

import os
import select
import sys
import time
from types import ModuleType

# The C cores of ``signal`` and ``ctypes``: the full modules (``enum``, ``struct``...) would add
# tens of milliseconds to every command's start on a busy machine.
signal: ModuleType = __import__("_signal")

PR_SET_CHILD_SUBREAPER = 36
KILL_ROUNDS_S = 10.0
_IGNORED = ("SIGINT", "SIGHUP", "SIGQUIT", "SIGTSTP", "SIGTTIN", "SIGTTOU")
_RESET_IN_LEADER = (*_IGNORED, "SIGPIPE", "SIGXFSZ", "SIGTERM", "SIGCHLD")


def become_subreaper() -> bool:
    """Ask Linux to re-parent orphaned descendants to this process; False where it cannot."""
    try:
        core: ModuleType = __import__("_ctypes")
        prctl = core.dlsym(core.dlopen(None, 0), "prctl")
        return bool(core.call_function(prctl, (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0)
    except (ImportError, OSError, AttributeError):
        return False  # not Linux: orphans go to init, the process group is the fallback


def _stat_fields(pid: int | str) -> list[bytes]:
    """The fields of ``/proc/PID/stat`` after the command name (state, parent pid, ...)."""
    fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, 4096).rsplit(b")", 1)[1].split()
    finally:
        os.close(fd)


def process_table() -> dict[int, tuple[int, bytes]]:
    """Every process in ``/proc`` as ``pid -> (parent pid, state letter)``; empty without /proc."""
    table: dict[int, tuple[int, bytes]] = {}
    try:
        entries = os.scandir("/proc")
    except OSError:
        return table
    with entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                fields = _stat_fields(entry.name)
            except (OSError, IndexError):
                continue  # it ended while we looked
            table[int(entry.name)] = (int(fields[1]), fields[0])
    return table


def descendants(root: int) -> list[int]:
    """Live (not zombie) processes below ``root``."""
    table = process_table()
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found: list[int] = []
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            found.append(child)
            stack.append(child)
    return [pid for pid in found if table[pid][1] != b"Z"]


def _parent_of(pid: int) -> int | None:
    try:
        return int(_stat_fields(pid)[1])
    except (OSError, IndexError, ValueError):
        return None


def send(pids: list[int], signum: int) -> None:
    """Signal each pid that is still in the tree: a pid that ended and was reused by an unrelated
    process between the listing and the signal is left alone (checked through a pidfd, which
    pins the process it names)."""
    family = {os.getpid(), *pids}
    for pid in pids:
        try:
            handle = os.pidfd_open(pid)
        except (AttributeError, OSError):
            handle = None
        try:
            if handle is not None:
                if _parent_of(pid) not in family:
                    continue
                signal.pidfd_send_signal(handle, signum)
            else:
                os.kill(pid, signum)
        except OSError:
            continue  # it ended on its own
        finally:
            if handle is not None:
                os.close(handle)


class Supervisor:
    """The state of one supervised command: its leader, what it was asked, and what it did."""

    def __init__(self, argv: list[str], mode: str, grace: float, drain: float) -> None:
        self.argv = argv
        self.mode = mode
        self.grace = grace
        self.drain = drain
        self.leader = 0
        self.leader_status: int | None = None
        self.has_children = True
        self.stop_requested = False
        self.wake_r, wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, self._on_sigterm)
        for name in _IGNORED:
            signal.signal(getattr(signal, name), signal.SIG_IGN)

    def _on_sigterm(self, *_: object) -> None:
        self.stop_requested = True

    def start(self) -> None:
        """Start the leader in a new session with our stdio, then let go of the stdio."""
        reset = {getattr(signal, name) for name in _RESET_IN_LEADER if hasattr(signal, name)}
        self.leader = os.posix_spawnp(
            self.argv[0], self.argv, dict(os.environ), setsid=True, setsigdef=reset
        )
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)

    def reap(self) -> None:
        """Collect every child that ended (orphans included); note the leader's status."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.has_children = False
                return
            if pid == 0:
                return
            if pid == self.leader:
                self.leader_status = status

    def _wait(self, timeout: float | None, control: int | None = None) -> bool:
        """Sleep until a signal arrives, the control pipe speaks, or ``timeout``; True when the
        control pipe reached end of file."""
        watched = [self.wake_r] if control is None else [self.wake_r, control]
        readable, _, _ = select.select(watched, [], [], timeout)
        if self.wake_r in readable:
            try:
                os.read(self.wake_r, 512)
            except BlockingIOError:
                pass  # another wake-up already emptied it
        if control is not None and control in readable:
            return os.read(control, 512) == b""
        return False

    def _signal_tree(self, signum: int) -> list[int]:
        tree = descendants(os.getpid())
        send(tree, signum)
        try:
            os.killpg(self.leader, signum)  # for systems without /proc or a subreaper
        except OSError:
            pass  # the group is gone
        return tree

    def end_tree(self) -> int:
        """SIGTERM every descendant, SIGKILL what is left after the grace, until none is left;
        how many processes were running when it began."""
        ended = len(self._signal_tree(signal.SIGTERM))
        self._signal_tree(signal.SIGCONT)  # a stopped process acts on SIGTERM only once resumed
        deadline = time.monotonic() + self.grace
        self.reap()
        while self.has_children and time.monotonic() < deadline:
            self._wait(min(0.05, max(0.0, deadline - time.monotonic())))
            self.reap()
        stop_trying = time.monotonic() + KILL_ROUNDS_S
        while self.has_children and time.monotonic() < stop_trying:
            self._signal_tree(signal.SIGKILL)
            self._wait(0.01)
            self.reap()
        return ended

    def run(self, control: int, report: int) -> int:
        """Supervise until no descendant is left; the leader's wait status."""
        _write(report, f"leader {self.leader}")
        drain_until: float | None = None
        while True:
            self.reap()
            if self.stop_requested:
                _write(report, f"stopped {self.end_tree()}")
                break
            if self.leader_status is not None:
                if not self.has_children:
                    break
                if self.mode == "call":
                    now = time.monotonic()
                    if drain_until is None:
                        drain_until = now + self.drain
                    elif now >= drain_until:
                        left = len(descendants(os.getpid()))
                        self.end_tree()
                        _write(report, f"left {left}")
                        break
            timeout = None if drain_until is None else max(0.0, drain_until - time.monotonic())
            if self._wait(timeout, control):
                self.stop_requested = True
        return self.leader_status if self.leader_status is not None else 1 << 8


def _write(fd: int, line: str) -> None:
    try:
        os.write(fd, f"{line}\n".encode())
    except OSError:
        pass  # nobody reads the report any more: the parent is gone


def exit_like(status: int) -> None:
    """End this process the way the leader ended: same exit code, or killed by the same signal."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            signal.signal(number, signal.SIG_DFL)
        except (ImportError, OSError, ValueError):
            pass  # SIGKILL and SIGSTOP keep their default anyway
        os.kill(os.getpid(), number)
        time.sleep(1.0)
        os._exit(128 + number)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def parse(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    """``--name value`` options before ``--``, and the command after it."""
    split = argv.index("--")
    options = dict(zip(argv[:split:2], argv[1:split:2], strict=True))
    return {key.lstrip("-"): value for key, value in options.items()}, argv[split + 1 :]


def main(argv: list[str]) -> None:
    """Supervise ``argv`` as described in the module docstring."""
    options, command = parse(argv)
    control, report = int(options["control"]), int(options["status"])
    os.set_inheritable(control, False)
    os.set_inheritable(report, False)
    become_subreaper()
    supervisor = Supervisor(
        command, options.get("mode", "call"), float(options["grace"]), float(options["drain"])
    )
    try:
        supervisor.start()
    except OSError as exc:
        os.write(2, f"{command[0]}: {exc.strerror or exc}\n".encode(errors="replace"))
        os._exit(127)
    exit_like(supervisor.run(control, report))


if __name__ == "__main__":
    main(sys.argv[1:])
