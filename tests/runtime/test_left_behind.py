"""Bodies left running: a stopped ``def`` body that ignores cancellation no longer holds the slot
or the lane that queued calls wait for, the card says so, and their number stays bounded.

The bodies really block (on an event the test sets last), on the lanes a burst runs in and on
the runtime loop a watched call runs on. Nothing here is timed: a queued call that could not
start before the bodies returned would wait for ever, and the test would fail on its timeout.
"""

from __future__ import annotations

import threading

import pytest

import workbench as wb
from tests.conftest import wait_until


def stubborn_registry(tmp_path, slots: int) -> tuple[wb.Registry, threading.Event, list[int]]:
    """A registry whose ``stubborn`` tool ignores its 0.2 s budget until ``release`` is set;
    ``inside`` counts the bodies inside it now, and the most there were at once (last)."""
    tools = wb.Registry(
        history=tmp_path / "history.sqlite",
        artifacts=tmp_path / "artifacts",
        max_concurrency=slots,
        terminate_grace=0.2,
    )
    release = threading.Event()
    inside = [0, 0]
    lock = threading.Lock()

    @tools.tool(timeout=0.2)
    def stubborn() -> str:
        """Ignore cancellation until released."""
        with lock:
            inside[0] += 1
            inside[1] = max(inside)
        release.wait(60)
        with lock:
            inside[0] -= 1
        return "late"

    @tools.tool
    def quick() -> str:
        """Answer at once."""
        return "ok"

    return tools, release, inside


def start_on(driver: str, tools: wb.Registry, names: list[str]) -> list[wb.Call]:
    """Start calls on the lanes (a burst nobody waits for) or on the runtime loop (a card
    watching each call keeps it there)."""
    if driver == "lanes":
        return tools.invoke_many([(name, {}) for name in names])
    return [tools.invoke(name, subscriber=lambda event: None) for name in names]


DRIVERS = ["lanes", "loop"]


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_quick_call_never_waits_for_bodies_that_ignored_their_timeout(tmp_path, driver):
    tools, release, inside = stubborn_registry(tmp_path, slots=2)
    try:
        stuck = start_on(driver, tools, ["stubborn", "stubborn"])
        assert wait_until(lambda: all(call.done for call in stuck), timeout=30)
        quick = start_on(driver, tools, ["quick"])[0]
        assert quick.wait(30).result == "ok"  # base: queued until the bodies return
        assert inside[0] == 2  # both bodies still run
        assert tools.left_running == 2
        for call in stuck:
            assert call.envelope is not None and call.envelope.error.kind == "timeout"
            assert any("its concurrency slot was freed" in note for note in call.notes)
    finally:
        release.set()
    assert wait_until(lambda: tools.left_running == 0, timeout=30)
    tools.history.close()


@pytest.mark.parametrize("driver", DRIVERS)
def test_bodies_left_running_are_bounded_past_that_they_keep_their_slot(tmp_path, driver):
    tools, release, inside = stubborn_registry(tmp_path, slots=2)
    try:
        calls = start_on(driver, tools, ["stubborn"] * 8)
        # Two bodies let go of their slots; the next two keep theirs; four calls wait.
        assert wait_until(lambda: sum(call.done for call in calls) == 4, timeout=30)
        waiting = [call for call in calls if not call.done]
        assert [call.state for call in waiting] == ["queued"] * 4
        assert inside == [4, 4]  # 4 bodies at most, never more
        assert tools.left_running == 4
        kept = [call for call in calls if call.done and _said(call, "keeps its concurrency slot")]
        assert len(kept) == 2
        assert all(_said(call, "the most it lets go of") for call in kept)
    finally:
        release.set()
    assert all(call.wait(60) is not None for call in calls)
    assert wait_until(lambda: tools.left_running == 0, timeout=30)
    tools.history.close()


def _said(call: wb.Call, words: str) -> bool:
    return any(words in note for note in call.notes)


def test_the_row_of_a_call_left_behind_says_so(tmp_path):
    tools, release, _ = stubborn_registry(tmp_path, slots=1)
    try:
        call = start_on("lanes", tools, ["stubborn"])[0]
        call.wait(30)
        row = tools.history.get(call.id)
        assert row is not None
        assert any("its concurrency slot was freed" in warning for warning in row["warnings"])
    finally:
        release.set()
    tools.history.close()
