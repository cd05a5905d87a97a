"""Counting real processes for the containment tests: trees read from /proc, markers in cmdlines."""

from __future__ import annotations

import os


def _stat(pid: str) -> tuple[int, str] | None:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), fields[0]


def tree_of(root: int) -> list[int]:
    """Live (non-zombie) descendants of ``root``, at any depth."""
    table = {
        int(name): stat for name in os.listdir("/proc") if name.isdigit() and (stat := _stat(name))
    }
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return [pid for pid in found if table[pid][1] != "Z"]


def with_marker(marker: str) -> list[int]:
    """Live processes whose command line contains ``marker``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        stat = _stat(name)
        if marker in cmdline and stat is not None and stat[1] != "Z":
            found.append(int(name))
    return found
