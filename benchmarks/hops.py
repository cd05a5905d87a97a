"""Thread hops, counted and priced: how often a call's path makes a thread wait for another.

A hop (one thread handing work to another and that one waking) is counted from outside as the
voluntary context switches of every thread of this process (``/proc/self/task/*/status``),
which the kernel counts whatever the machine's load; its price is one wake of a waiting
thread, timed here as half a round trip between two threads.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path


def voluntary_switches() -> int:
    """The voluntary context switches of every thread of this process so far."""
    return sum(count for _, count in switches_by_thread().values())


def switches_by_thread() -> dict[int, tuple[str, int]]:
    """The voluntary context switches so far of each live thread of this process: its native
    id → (its name, the count). workbench names its threads (``workbench-runtime``,
    ``workbench-history``, ``workbench-worker-3``, ...)."""
    names = {thread.native_id: thread.name for thread in threading.enumerate()}
    found: dict[int, tuple[str, int]] = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            with (task / "status").open(encoding="ascii") as status:
                count = next(
                    int(line.split()[1])
                    for line in status
                    if line.startswith("voluntary_ctxt_switches")
                )
        except (FileNotFoundError, ProcessLookupError):
            # the thread ended while we read (the directory is gone, or its status answers
            # ESRCH): its switches went with it
            continue
        native_id = int(task.name)
        found[native_id] = (names.get(native_id, f"thread {native_id}"), count)
    return found


def where_switches_go(body: Callable[[int], object], n: int) -> dict[str, float]:
    """Voluntary context switches per call of ``body(n)``, by thread name (worker threads
    summed as ``workbench-worker``; a thread that ended meanwhile is not counted), leaving out
    what switched less than once in a hundred calls."""
    before = switches_by_thread()
    body(n)
    per_call: dict[str, float] = {}
    for name, since in _switched_since(before):
        group = "workbench-worker" if name.startswith("workbench-worker") else name
        per_call[group] = per_call.get(group, 0.0) + since / n
    return {name: share for name, share in sorted(per_call.items()) if share >= 0.01}


def switches_per_call(body: Callable[[int], object], n: int) -> float:
    """Voluntary context switches per call of ``body(n)`` (which makes ``n`` calls), counted
    by the threads alive when it returns (a thread that ended meanwhile is not counted)."""
    before = switches_by_thread()
    body(n)
    return sum(since for _, since in _switched_since(before)) / n


def _switched_since(before: dict[int, tuple[str, int]]) -> list[tuple[str, int]]:
    """Each live thread's name and its voluntary switches since ``before`` (a thread that
    ended took its count with it: totals over all threads could even fall)."""
    return [
        (name, count - before.get(native_id, (name, 0))[1])
        for native_id, (name, count) in switches_by_thread().items()
    ]


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


def crossing_us(round_trips: int = 2_000, rounds: int = 3) -> float:
    """What an ``await`` pays to have a plain function run off its loop and hear back, with
    nothing run, in µs: the best round trip from a running asyncio loop to a waiting worker
    thread (a queue) and back (``call_soon_threadsafe`` setting the awaited future). An awaited
    ``def`` call crosses so, to keep the awaiting loop free; this is its floor."""
    jobs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()

    def work() -> None:
        while (job := jobs.get()) is not None:
            job()

    async def trips(count: int) -> float:
        loop = asyncio.get_running_loop()
        started = time.perf_counter()
        for _ in range(count):
            answered: asyncio.Future[None] = loop.create_future()
            jobs.put(lambda answered=answered: loop.call_soon_threadsafe(answered.set_result, None))
            await answered
        return (time.perf_counter() - started) / count * 1e6

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(trips(min(round_trips, 200)))
        return min(loop.run_until_complete(trips(round_trips)) for _ in range(rounds))
    finally:
        jobs.put(None)
        worker.join()
        loop.close()
