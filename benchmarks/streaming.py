"""Streaming: output through ``shell_exec`` with a live card attached, against the raw pipe.

The same command is read twice in one run: once straight from an asyncio subprocess pipe in
64 KiB chunks (the ceiling), once more writing each chunk to a file as it comes (the least that
keeping the complete output costs; workbench keeps it as the artifact), and once through
``shell_exec`` with a ``CallCard`` subscribed
(widget state updated headless, no browser). Reported: MB/s of each and their ratio, how many
widget updates the card sent (bounded by its coalescing rate, not by the output), and this
process's peak memory growth while the output streamed.
"""

from __future__ import annotations

import asyncio
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import workbench as wb

LINE = "0123456789abcdefghijklmnopqrstuvwxyz" * 2 + "ABCDEFGHIJKLMNOPQRSTUVWXYZ\n"


def command_for(size: int) -> str:
    """A shell command printing exactly ``size`` bytes of 99-character lines, fast (a process
    substitution, so the SIGPIPE ``yes`` gets is not the pipeline's exit status)."""
    return f"head -c {size} < <(yes {LINE.rstrip()!r})"


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


class PeakMemory:
    """Samples this process's resident memory every few milliseconds while in use."""

    def __init__(self, interval: float = 0.005) -> None:
        self.interval = interval
        self.baseline = 0
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(self.interval):
            self.peak = max(self.peak, _rss())

    def __enter__(self) -> PeakMemory:
        self.baseline = self.peak = _rss()
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss())

    @property
    def growth(self) -> int:
        """Bytes above the resident memory at the start."""
        return self.peak - self.baseline


async def _raw(command: str, keep: Path | None = None) -> tuple[int, float]:
    """Read the pipe in 64 KiB chunks; with ``keep``, also write every chunk to that file (the
    least that keeping the complete output costs)."""
    handle = keep.open("wb") if keep is not None else None
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        "bash", "-c", command, stdout=asyncio.subprocess.PIPE
    )
    assert process.stdout is not None
    total = 0
    while chunk := await process.stdout.read(65536):
        total += len(chunk)
        if handle is not None:
            handle.write(chunk)
    await process.wait()
    if handle is not None:
        handle.close()
    return total, time.perf_counter() - started


async def _through_workbench(tools: wb.Registry, command: str) -> tuple[int, float, int]:
    from workbench.widgets import card

    started = time.perf_counter()
    call = tools.invoke("shell_exec", {"command": command})
    view = card(call)
    envelope = await call
    seconds = time.perf_counter() - started
    assert envelope.ok and envelope.result["exit_code"] == 0, call.receipt
    return call.output_size("stdout"), seconds, view.updates_sent


def run(
    size: int = 100_000_000, memory_size: int = 1_000_000_000, rounds: int = 3
) -> list[dict[str, Any]]:
    """Stream ``size`` bytes each way (best of ``rounds``) for the throughput, then
    ``memory_size`` bytes through workbench for the memory growth."""
    with tempfile.TemporaryDirectory() as scratch:
        tools = wb.Registry(history=":memory:", artifacts=Path(scratch) / "artifacts")
        wb.builtins.register(tools, root=scratch)
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(_raw(command_for(1_000_000)))  # warm up both paths
            loop.run_until_complete(_through_workbench(tools, command_for(1_000_000)))
            # Best of a few rounds each, interleaved, so disk and scheduler noise hits all alike.
            raws, kepts, ours = [], [], []
            for _ in range(rounds):
                raws.append(loop.run_until_complete(_raw(command_for(size))))
                kepts.append(
                    loop.run_until_complete(
                        _raw(command_for(size), keep=Path(scratch) / "kept.log")
                    )
                )
                ours.append(loop.run_until_complete(_through_workbench(tools, command_for(size))))
            raw_bytes, raw_seconds = min(raws, key=lambda run: run[1])
            kept_bytes, kept_seconds = min(kepts, key=lambda run: run[1])
            ours_bytes, ours_seconds, updates = min(ours, key=lambda run: run[1])
            with PeakMemory() as memory:
                big_bytes, big_seconds, big_updates = loop.run_until_complete(
                    _through_workbench(tools, command_for(memory_size))
                )
        finally:
            loop.close()
            tools.history.close()
    assert raw_bytes == ours_bytes == size and big_bytes == memory_size
    raw_rate = raw_bytes / raw_seconds / 1e6
    ours_rate = ours_bytes / ours_seconds / 1e6
    return [
        {"measure": "raw asyncio pipe", "bytes": raw_bytes, "mb_per_s": raw_rate},
        {
            "measure": "raw asyncio pipe, kept in a file",
            "bytes": kept_bytes,
            "mb_per_s": kept_bytes / kept_seconds / 1e6,
            "ratio": kept_bytes / kept_seconds / 1e6 / raw_rate,
        },
        {
            "measure": "shell_exec + card",
            "bytes": ours_bytes,
            "mb_per_s": ours_rate,
            "ratio": ours_rate / raw_rate,
            "widget_updates": updates,
            "seconds": ours_seconds,
        },
        {
            "measure": "shell_exec + card (memory run)",
            "bytes": big_bytes,
            "mb_per_s": big_bytes / big_seconds / 1e6,
            "widget_updates": big_updates,
            "seconds": big_seconds,
            "peak_memory_growth_mb": memory.growth / 1e6,
        },
    ]


if __name__ == "__main__":
    for row in run():
        print(row)
