"""A load run in a fresh interpreter under a cap on its address space and a bounded wait, so that
a file that makes a load hang or take all memory fails the test instead of the machine; the
child reports what it read and the peak of its resident memory while it read it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

MIB = 1 << 20

CHILD = textwrap.dedent(
    """
    import json, resource, sys, warnings
    cap = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    import workbench as wb

    def status(key):
        with open("/proc/self/status") as lines:
            for line in lines:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024

    def run(body):
        result = {}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result.update(body())
        except wb.transcripts.TranscriptError as exc:
            result["error"] = str(exc)
        except BaseException as exc:  # a MemoryError under the cap among them: the test names it
            result["escaped"] = f"{type(exc).__name__}: {exc}"
        return result

    def rows_of(history):
        rows = history.rows()
        return {
            "rows": len(rows),
            "receipt_chars": [row["receipt_chars"] for row in rows],
            "receipts": [row["receipt"][:60] for row in rows],
            "artifacts": [row["artifacts"] for row in rows],
            "unreadable": [str(item) for item in history.unreadable],
        }

    def written_bytes():
        with open("/proc/self/io") as lines:
            return next(int(line.split()[1]) for line in lines if line.startswith("wchar:"))

    before = status("VmRSS")
    written_before = written_bytes()
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # the peak resident memory counts from here
    """
)

REPORT = """
result.update(peak=status("VmHWM"), before=before, written=written_bytes() - written_before)
print(json.dumps(result))
"""

LOAD = "result = run(lambda: rows_of(wb.transcripts.load(sys.argv[2])))"


def in_child(
    body: str, *args: str | Path, cap: int = 1024 * MIB, timeout: float = 120, cwd: Path
) -> dict[str, Any]:
    """Run ``body`` (which sets ``result`` with ``run(...)``) in a child under an address-space
    cap of ``cap`` bytes; ``result`` with ``peak`` (bytes of resident memory at most, counted
    from before ``body``), ``before`` (resident bytes then) and ``written`` (bytes the child
    wrote to files while ``body`` ran, from ``/proc/self/io``). Fails when the child does not
    return within ``timeout`` seconds or ends without a result."""
    script = CHILD + textwrap.dedent(body) + REPORT
    try:
        done = subprocess.run(
            [sys.executable, "-c", script, str(cap), *map(str, args)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the child did not return within {timeout} s") from None
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0 and lines, (done.returncode, done.stderr[-3000:])
    found: dict[str, Any] = json.loads(lines[-1])
    return found


def load_in_child(path: Path, *, cap: int = 1024 * MIB, timeout: float = 120) -> dict[str, Any]:
    """``wb.transcripts.load(path)`` in a child (``in_child``), its rows read back: ``rows``,
    ``receipt_chars``, the first characters of each ``receipts``, ``artifacts``, ``unreadable``;
    or ``error`` (a ``TranscriptError``), or ``escaped`` (any other exception)."""
    return in_child(LOAD, path, cap=cap, timeout=timeout, cwd=path.parent)
