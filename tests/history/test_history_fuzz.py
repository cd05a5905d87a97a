"""Thousands of awkward calls through a real registry with its history on disk (3,000 in ``make
test``, 10,000 and more under ``make soak``, ``WORKBENCH_FUZZ_CALLS``): every call has a
complete row, every row decodes, every wire string and receipt is valid UTF-8, and
``wb.compact`` runs over the lot.

The argument sets hold what models and careless code send: lone surrogates, invalid bytes, deep
nesting, NaN and infinities, integers past any limit, non-dict top levels and odd tool names.
``shell_exec`` runs as a dry run (preflight and planning, never a random shell command); every
other tool really runs.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from typing import Any, Literal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

import workbench as wb
from workbench.history import HistoryWarning

BATCH = 100
BATCHES = int(os.environ.get("WORKBENCH_FUZZ_CALLS", "3000")) // BATCH


def nested(levels: int) -> Any:
    value: Any = "bottom"
    for level in range(levels):
        value = [value] if level % 2 else {"k": value}
    return value


surrogates = st.sampled_from(["\ud800", "\udfff", "a\udcffb", "\ud83d", "\ud83d\ude00"])
odd_text = st.one_of(
    st.text(max_size=20), surrogates, st.text(max_size=5).map(lambda s: s + "\ud800")
)
huge_numbers = st.sampled_from(
    [10**30, -(10**19), -(10**400), math.nan, math.inf, -math.inf, 2**63, 1e308]
) | st.integers(min_value=4400, max_value=6000).map(lambda digits: -(10**digits))
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    odd_text,
    st.binary(max_size=12),
    huge_numbers,
)
values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(odd_text | st.integers(), children, max_size=3)
    ),
    max_leaves=6,
)
deep = st.integers(min_value=50, max_value=1500).map(nested)


class Point(BaseModel):
    x: int
    y: float = 0.0


def typed_tools(tools: wb.Registry) -> list[str]:
    @tools.tool
    def echo(value: Any = None) -> Any:
        """Return the value it was given (awkward results too)."""
        return value

    @tools.tool
    def shape(
        count: int, names: list[str], mode: Literal["a", "b"] = "a", ratio: float = 1.0
    ) -> dict:
        """A typed tool with coercible fields."""
        return {"count": count, "names": names, "mode": mode, "ratio": ratio}

    @tools.tool
    def locate(point: Point, label: str = "") -> str:
        """A tool taking a model."""
        return f"{label}@{point.x},{point.y}"

    return ["echo", "shape", "locate"]


def arguments_for(names: list[str]) -> st.SearchStrategy[dict[str, Any] | Any]:
    keyed = st.dictionaries(st.sampled_from(names) | odd_text, values | deep, max_size=4)
    top_level = st.one_of(values, deep, st.lists(values, max_size=3), st.binary(max_size=8))
    return st.one_of(keyed, keyed, keyed, top_level)


def test_thousands_of_awkward_calls_each_leave_a_complete_readable_row(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("alpha\nbeta\n")
    (root / "sub").mkdir()
    tools = wb.Registry(history=tmp_path / "history.sqlite", max_concurrency=16)
    wb.builtins.register(tools, root=root)
    parameters = {"command", "timeout", "background", "cwd", "action", "pid", "path", "offset"}
    parameters |= {"limit", "value", "count", "names", "mode", "ratio", "point", "label", "x"}
    tool_names = ["shell_exec", "process", "file_read", "artifact_read", *typed_tools(tools)]
    odd_names = ["", " ", "shell_exec ", "nope", "\ud800", "x" * 300, "file_read\x00"]
    call_specs = st.tuples(
        st.sampled_from(tool_names) | st.sampled_from(odd_names),
        arguments_for(sorted(parameters)),
    )
    calls: list[wb.Call] = []

    @settings(
        max_examples=BATCHES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.lists(call_specs, min_size=BATCH, max_size=BATCH))
    def run_batch(batch: list[tuple[str, Any]]) -> None:
        started = [
            tools.invoke(name, args, dry_run=name == "shell_exec" or name.startswith("shell"))
            for name, args in batch
        ]
        for call in started:
            call.wait(30)
        calls.extend(started)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HistoryWarning)
        run_batch()
    assert len(calls) >= BATCH * BATCHES

    for call in calls:
        call.wire.encode("utf-8")
        call.receipt.encode("utf-8")

    history = wb.History(tmp_path / "history.sqlite")
    rows = history.rows()
    by_id = {row["call_id"]: row for row in rows}
    missing = [call.id for call in calls if call.id not in by_id]
    assert missing == []
    assert len(rows) == len(calls)
    for call in calls:
        row = by_id[call.id]
        assert row["tool"] is not None and row["status"] in ("success", "error")
        assert row["state"] == call.state
        assert (row["kind"] is None) == call.envelope.ok
        assert row["receipt"] == call.receipt
        assert isinstance(row["canonical"], dict)
        row["wire"].encode("utf-8")
        json.dumps(row, ensure_ascii=False).encode("utf-8")
    assert [p for p in history.problems if p.kind == "decode"] == []
    assert len(history.envelopes()) == len(calls)
    assert len(history.to_dataframe()) == len(calls)
    compacted = wb.compact(history, budget_chars=20_000)
    assert len(compacted.receipts) == len(calls)
    for receipt in compacted.receipts:
        receipt.encode("utf-8")
