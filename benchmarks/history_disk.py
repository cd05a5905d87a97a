"""Per-call overhead with the history in a real SQLite file, before and after "nothing lost".

*Before* is the previous write path, kept here as the baseline: the row was queued for a
batching thread that slept 20 ms to gather a batch, and the call ended at once, before its row
was written (a process killed then lost it; a failed write was dropped). *After* is today's
``History``: the call ends only once its row is committed, with group commit, retries and the
journal. Both write the same file format to a temporary directory on the same disk, and are
measured in the same run beside a call with no history at all. Figures are microseconds per
call, best of several rounds: awaited one after another (latency), and 100 at once (throughput,
where group commit shares transactions).
"""

from __future__ import annotations

import asyncio
import queue
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pydantic_core

import workbench as wb
from workbench.history import Then
from workbench.history.row import DETAIL, SCALARS, CallRecord
from workbench.history.store import INSERT as _INSERT

ARGS: dict[str, Any] = {"a": "1", "b": 2, "c": 3}
BATCH_DELAY_S = 0.02


def add(a: int, b: int, c: int) -> int:
    """Add three integers."""
    return a + b + c


async def add_async(a: int, b: int, c: int) -> int:
    """Add three integers."""
    return a + b + c


class BatchedHistory(wb.History):
    """The previous write path: encode on the ending thread, queue, return; a writer thread
    sleeps ``BATCH_DELAY_S`` to gather a batch and writes it, dropping it on any SQLite error."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._rows: queue.Queue[list[Any] | None] = queue.Queue()
        self._batcher = threading.Thread(target=self._batch_loop, daemon=True)
        self._batcher.start()

    def write(self, records: Sequence[CallRecord]) -> None:
        for record in records:
            self.record(record)  # the previous path: the call ended before its row was written

    def append(self, record: CallRecord, then: Then | None = None) -> None:
        self.append_all([(record, then)])

    def append_all(self, rows: Sequence[tuple[CallRecord, Then | None]]) -> None:
        for record, then in rows:
            self.record(record)
            if then is not None:
                then(None)  # the previous path: the call ended before its row was written

    def record(self, row: CallRecord | Mapping[str, Any] | Callable[[], Any]) -> None:
        data = row() if callable(row) else row
        record = data if isinstance(data, CallRecord) else CallRecord.from_mapping(data)
        values = [getattr(record, name) for name in SCALARS]
        detail = {name: getattr(record, name) for name in DETAIL}
        values.append(pydantic_core.to_json(detail, fallback=repr, inf_nan_mode="null").decode())
        self._rows.put(values)

    def _batch_loop(self) -> None:
        conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        while True:
            batch = [self._rows.get()]
            time.sleep(BATCH_DELAY_S)
            while True:
                try:
                    batch.append(self._rows.get_nowait())
                except queue.Empty:
                    break
            rows = [row for row in batch if row is not None]
            try:
                with conn:
                    conn.executemany(_INSERT, rows)
            except sqlite3.Error:
                pass  # the baseline's behaviour, measured as it was: the rows are dropped
            for _ in batch:
                self._rows.task_done()
            if None in batch:
                conn.close()
                return

    def flush(self) -> None:
        self._rows.join()

    def close(self) -> None:
        self._rows.put(None)
        self._batcher.join()
        super().close()


class NoHistory(wb.History):
    """Keeps nothing: the floor the other two are measured against."""

    def write(self, records: Sequence[CallRecord]) -> None:
        return None

    def append(self, record: CallRecord, then: Then | None = None) -> None:
        self.append_all([(record, then)])

    def append_all(self, rows: Sequence[tuple[CallRecord, Then | None]]) -> None:
        for _record, then in rows:
            if then is not None:
                then(None)


def _registry(variant: str, directory: Path) -> wb.Registry:
    path = directory / f"{variant.split()[0]}.sqlite"
    history: wb.History
    if variant.startswith("before"):
        wb.History(path).close()  # the schema, as the previous version created it on open
        history = BatchedHistory(path)
    elif variant == "no history":
        history = NoHistory(path)
    else:
        history = wb.History(path)
    tools = wb.Registry(history=history, artifacts=directory / "artifacts")
    tools.register(add)
    tools.register(add_async)
    return tools


def _best(
    loop: asyncio.AbstractEventLoop, body: Callable[[], Any], n: int, rounds: int
) -> tuple[float, float]:
    loop.run_until_complete(body(max(1, n // 10)))
    best_wall = best_cpu = float("inf")
    for _ in range(rounds):
        cpu = time.process_time()
        wall = time.perf_counter()
        loop.run_until_complete(body(n))
        best_wall = min(best_wall, (time.perf_counter() - wall) / n * 1e6)
        best_cpu = min(best_cpu, (time.process_time() - cpu) / n * 1e6)
    return best_wall, best_cpu


VARIANTS = (
    "before: batched, ends before the row is written",
    "after: ends once committed",
    "no history",
)


def run(n: int = 2_000, rounds: int = 3) -> list[dict[str, Any]]:
    """Wall and CPU µs per call for each variant and tool, one by one and 100 at once."""
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="workbench-bench-") as scratch:
        for variant in VARIANTS:
            tools = _registry(variant, Path(scratch))
            loop = asyncio.new_event_loop()
            for name in ("add_async", "add"):

                async def one_by_one(
                    count: int, name: str = name, tools: wb.Registry = tools
                ) -> None:
                    for _ in range(count):
                        await tools.invoke(name, ARGS)

                async def hundred_at_once(
                    count: int, name: str = name, tools: wb.Registry = tools
                ) -> None:
                    for start in range(0, count, 100):
                        calls = [tools.invoke(name, ARGS) for _ in range(min(100, count - start))]
                        for call in calls:
                            await call

                for shape, body in (("one by one", one_by_one), ("100 at once", hundred_at_once)):
                    wall, cpu = _best(loop, body, n, rounds)
                    rows.append(
                        {
                            "history": variant,
                            "tool": name,
                            "calls": shape,
                            "wall_us": wall,
                            "cpu_us": cpu,
                        }
                    )
            loop.close()
            tools.history.close()
    return rows


if __name__ == "__main__":
    from benchmarks.__main__ import table

    print(table(run(), ["history", "tool", "calls", "wall_us", "cpu_us"]))
