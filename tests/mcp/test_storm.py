"""A cancellation storm: a hundred ``sleep`` commands, each cancelled at its own moment while
the calls are still starting, over stdio (the client cancels, then closes the connection and
the server is stopped) and in process (Terminate). Every ``sleep`` must end with its call: the
processes left running afterwards, and those ever seen re-parented to init (pid 1, the sign of
a supervisor killed before it ended its tree), are counted in /proc, and both must be zero."""

from __future__ import annotations

import os
import random
import secrets
import signal
import time
from collections.abc import Iterator

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import wait_for_exit
from tests.mcp.storm_registry import CONCURRENCY, registry
from workbench import mcp as wbmcp

CALLS = 100
SPREAD_S = 2.0
"""Each call is cancelled at a moment drawn from [0, SPREAD_S): most while still starting."""
SEED = 40
END_LIMIT_S = 60.0


def sleeps(marker: str) -> dict[int, int]:
    """Live ``sleep MARKER`` processes: pid → parent pid."""
    found: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
            with open(f"/proc/{name}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if argv[:2] == [b"sleep", marker.encode()] and fields[0] != "Z":
            found[int(name)] = int(fields[1])
    return found


@pytest.fixture
def marker() -> Iterator[str]:
    """A ``sleep`` duration no other process on this machine uses; whatever is left running
    under it is ended by pid after the test."""
    value = f"300.{secrets.randbelow(10**9):09d}"
    yield value
    for pid in sleeps(value):
        os.kill(pid, signal.SIGKILL)


def cancel_moments() -> list[float]:
    rng = random.Random(SEED)
    return [rng.uniform(0, SPREAD_S) for _ in range(CALLS)]


def settle(marker: str) -> tuple[list[int], list[int]]:
    """(processes still running once each had END_LIMIT_S to end, those seen orphaned)."""
    seen = sleeps(marker)
    orphaned = [pid for pid, parent in seen.items() if parent == 1]
    left = wait_for_exit(list(seen), END_LIMIT_S)
    orphaned += [pid for pid, parent in sleeps(marker).items() if parent == 1]
    return left, sorted(set(orphaned))


def test_a_cancellation_storm_over_stdio_leaves_no_process(marker):
    argv = wbmcp.server_command("tests.mcp.storm_registry:registry")
    server = StdioServerParameters(command=argv[0], args=argv[1:])
    most_running = 0

    async def storm() -> None:
        nonlocal most_running
        async with Client(server) as client:
            listed = await client.list_tools()
            assert "shell_exec" in {tool.name for tool in listed.tools}
            seen_running = anyio.Event()

            async def call(after: float) -> None:
                with anyio.move_on_after(after):
                    await client.call_tool("shell_exec", {"command": f"sleep {marker}"})

            async def last_call() -> None:
                # Cancelled only once some sleep is seen running (or after a minute), so the
                # storm surely reaches running commands however slowly this machine starts them.
                with anyio.move_on_after(END_LIMIT_S):
                    async with anyio.create_task_group() as inner:
                        command = {"command": f"sleep {marker}"}
                        inner.start_soon(client.call_tool, "shell_exec", command)
                        await seen_running.wait()
                        inner.cancel_scope.cancel()

            async def watch() -> None:
                nonlocal most_running
                while True:
                    most_running = max(most_running, len(sleeps(marker)))
                    if most_running:
                        seen_running.set()
                    await anyio.sleep(0.02)

            async with anyio.create_task_group() as group:
                group.start_soon(watch)
                async with anyio.create_task_group() as calls:
                    for after in cancel_moments():
                        calls.start_soon(call, after)
                    calls.start_soon(last_call)
                group.cancel_scope.cancel()
        # Leaving the client closed the server's stdin, then stopped it (SIGTERM, SIGKILL).

    anyio.run(storm)
    assert most_running > 0  # the storm did reach running commands
    left, orphaned = settle(marker)
    assert orphaned == []
    assert left == []


def test_the_same_storm_in_process_leaves_no_process(marker):
    tools = registry()
    assert tools.max_concurrency == CONCURRENCY
    calls = [
        (after, tools.invoke("shell_exec", {"command": f"sleep {marker}"}))
        for after in cancel_moments()
    ]
    began = time.monotonic()
    for after, call in sorted(calls, key=lambda pair: pair[0]):
        time.sleep(max(0.0, began + after - time.monotonic()))
        call.terminate()
    assert {call.wait(60).killed_by for _, call in calls} == {"user"}
    left, orphaned = settle(marker)
    assert orphaned == []
    assert left == []
    tools.history.close()
