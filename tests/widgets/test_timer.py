"""The cards' timer thread runs delayed redraws in order of their due time, and one that
raises is reported without stopping the others."""

from __future__ import annotations

import threading

import pytest

from workbench.widgets._timer import call_later


def test_callbacks_run_by_due_time_and_a_failing_one_is_reported():
    ran: list[str] = []
    done = threading.Event()

    def boom() -> None:
        raise RuntimeError("redraw broke")

    def last() -> None:
        ran.append("late")
        done.set()

    with pytest.warns(UserWarning, match="redraw broke"):
        call_later(0.3, last)
        call_later(0.1, lambda: ran.append("early"))
        call_later(0.05, boom)
        call_later(0.2, lambda: ran.append("middle"))
        assert done.wait(5)
    assert ran == ["early", "middle", "late"]
