"""Thread hops, counted and priced: how often a call's path makes a thread wait for another.

A hop (one thread handing work to another and that one waking) is counted from outside as the
voluntary context switches of every thread of this process (``/proc/self/task/*/status``),
which the kernel counts whatever the machine's load; its price is one wake of a waiting
thread, timed here as half a round trip between two threads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path


def voluntary_switches() -> int:
    """The voluntary context switches of every thread of this process so far."""
    total = 0
    for task in Path("/proc/self/task").iterdir():
        try:
            with (task / "status").open(encoding="ascii") as status:
                for line in status:
                    if line.startswith("voluntary_ctxt_switches"):
                        total += int(line.split()[1])
        except FileNotFoundError:  # the thread ended while we read: its switches went with it
            continue
    return total


def switches_per_call(body: Callable[[int], object], n: int) -> float:
    """Voluntary context switches per call of ``body(n)`` (which makes ``n`` calls)."""
    before = voluntary_switches()
    body(n)
    return (voluntary_switches() - before) / n


def hop_us(round_trips: int = 2_000, rounds: int = 3) -> float:
    """The price of one hop on this machine, in µs: half of the best round trip between two
    threads that wake each other with ``threading.Event``."""
    ping, pong = threading.Event(), threading.Event()

    def echo() -> None:
        for _ in range(round_trips * rounds):
            ping.wait()
            ping.clear()
            pong.set()

    thread = threading.Thread(target=echo, daemon=True)
    thread.start()
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(round_trips):
            ping.set()
            pong.wait()
            pong.clear()
        best = min(best, (time.perf_counter() - started) / round_trips / 2 * 1e6)
    thread.join()
    return best
