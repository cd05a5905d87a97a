"""A watchdog process that ends workbench's process groups if the Python that started them dies.

Run as a script (``python -I -S .../_reaper.py``), so it needs nothing but the standard
library. It reads ``+PGID`` / ``-PGID`` lines on stdin; when stdin closes (the parent exited,
however it died, even by SIGKILL) it sends SIGTERM to every group it still knows, waits a short
grace, then SIGKILL. It lives in its own session, so a Jupyter
interrupt sent to the kernel's process group does not reach it.
"""

from __future__ import annotations

import os
import signal
import sys
import time

GRACE_S = 3.0


def _alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except OSError:
        return False
    return True


def _signal_all(groups: set[int], signum: int) -> None:
    for pgid in groups:
        try:
            os.killpg(pgid, signum)
        except OSError:
            pass


def main() -> None:
    """Track groups until stdin closes, then end them."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    groups: set[int] = set()
    for line in sys.stdin:
        text = line.strip()
        if text[:1] == "+" and text[1:].isdigit():
            groups.add(int(text[1:]))
        elif text[:1] == "-" and text[1:].isdigit():
            groups.discard(int(text[1:]))
    groups = {pgid for pgid in groups if _alive(pgid)}
    _signal_all(groups, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while groups and time.monotonic() < deadline:
        time.sleep(0.05)
        groups = {pgid for pgid in groups if _alive(pgid)}
    _signal_all(groups, signal.SIGKILL)


if __name__ == "__main__":
    main()
