"""Run a command and say, once it ends, how long it took: wall time and the CPU time of it and
every process it waited for (user + system), as ``make test`` prints at its end.

``python3 scripts/timed.py LABEL COMMAND...``; the exit status is the command's. Only the
standard library, so it runs before any environment exists.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: python3 scripts/timed.py LABEL COMMAND...", file=sys.stderr)
        return 2
    label, command = argv[0], argv[1:]
    started = time.monotonic()
    status = subprocess.call(command)
    wall = time.monotonic() - started
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = used.ru_utime + used.ru_stime
    print(
        f"{label}: {'passed' if status == 0 else f'failed ({status})'} in {wall / 60:.1f} min"
        f" of wall, {cpu / 60:.1f} CPU-min (user {used.ru_utime / 60:.1f}"
        f" + sys {used.ru_stime / 60:.1f})",
        flush=True,
    )
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
