"""The history: a real SQLite file, one row per call, complete and safe under concurrency."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import threading

import pytest

import workbench as wb
from workbench.history import CallRecord, HistoryWarning


def make_registry(tmp_path, **options):
    registry = wb.Registry(history=tmp_path / "history.sqlite", **options)

    @registry.tool
    def add(a: int, b: int = 0) -> int:
        """Add two numbers."""
        return a + b

    @registry.tool
    async def pause(seconds: float) -> float:
        """Sleep a little."""
        await asyncio.sleep(seconds)
        return seconds

    return registry


def test_history_is_a_real_sqlite_file_that_survives_a_reopen(tmp_path):
    registry = make_registry(tmp_path)
    first = registry.invoke("add", {"a": "1", "b": 2})
    first.wait(5)
    registry.invoke("add", {"a": "x"}).wait(5)
    registry.history.close()

    with sqlite3.connect(tmp_path / "history.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0] == 2

    reopened = wb.History(tmp_path / "history.sqlite")
    rows = reopened.rows()
    assert [row["status"] for row in rows] == ["success", "error"]
    row = rows[0]
    assert row["call_id"] == first.id
    assert row["raw_args"] == {"a": "1", "b": 2}
    assert row["arguments"] == {"a": 1, "b": 2}
    assert row["coercions"] == ['a: "1" → 1']
    assert row["receipt"] == "3"
    assert row["wire"] == first.envelope.to_wire()
    assert row["canonical"] == first.envelope.canonical()
    assert row["events"][0]["type"] == "tool.queued"
    assert rows[1]["kind"] == "invalid_args" and rows[1]["retryable"] is True
    assert reopened.envelopes()[0] == first.envelope


def test_arguments_sent_as_a_json_string_are_kept_raw_and_not_called_a_coercion(tmp_path):
    registry = make_registry(tmp_path)
    wire = registry.invoke("add", '{"a": 1, "b": 2}')
    forgiven = registry.invoke("add", '{"a": "1", "b": 2}')
    wire.wait(5), forgiven.wait(5)
    rows = {row["call_id"]: row for row in registry.history.rows()}
    assert rows[wire.id]["raw_args"] == '{"a": 1, "b": 2}'  # as the model sent it
    assert rows[wire.id]["coercions"] == []
    assert rows[forgiven.id]["coercions"] == ['a: "1" → 1']
    registry.history.close()


def test_artifacts_default_to_beside_the_history(tmp_path):
    registry = make_registry(tmp_path)
    assert registry.artifacts.root == (tmp_path / "artifacts").resolve()


def test_to_dataframe_has_one_row_per_call_with_the_analysis_columns(tmp_path):
    registry = make_registry(tmp_path)
    for a in range(3):
        registry.invoke("add", {"a": a}).wait(5)
    frame = registry.history.to_dataframe()
    required = {
        "call_id",
        "tool",
        "status",
        "kind",
        "retryable",
        "summary_text",
        "elapsed_ms",
        "started_at",
        "receipt_chars",
        "truncated",
        "killed_by",
    }
    assert required <= set(frame.columns)
    assert len(frame) == 3
    assert list(frame["receipt_chars"]) == [1, 1, 1]
    assert frame["elapsed_ms"].min() > 0
    assert str(frame["started_at"].dtype).startswith("datetime64")


def test_two_hundred_concurrent_calls_lose_no_row(tmp_path):
    registry = make_registry(tmp_path, max_concurrency=50)
    calls = registry.invoke_many([("pause", {"seconds": 0.01})] * 100)
    calls += registry.invoke_many([("add", {"a": i}) for i in range(100)])
    for call in calls:
        call.wait(30)
    ids = {row["call_id"] for row in registry.history.rows()}
    assert ids == {call.id for call in calls}
    assert len(registry.history) == 200


def test_secrets_and_the_context_never_reach_the_history(tmp_path):
    registry = wb.Registry(history=tmp_path / "h.sqlite", secrets={"API_KEY": "sk-very-secret"})

    @registry.tool
    def use_key(query: str, ctx: wb.ToolContext) -> str:
        """Use a secret."""
        return f"used {len(ctx.secrets['API_KEY'])} chars"

    registry.invoke("use_key", {"query": "q"}).wait(5)
    registry.history.close()
    raw = (tmp_path / "h.sqlite").read_bytes()
    assert b"sk-very-secret" not in raw
    assert b"ToolContext" not in raw


def test_the_family_column_is_the_family_that_rendered_the_receipt(tmp_path):
    registry = make_registry(tmp_path)
    (tmp_path / "tree").mkdir()
    wb.builtins.register(registry, root=tmp_path / "tree")
    registry.invoke("file_read", {"path": "."}).wait(5)
    registry.invoke("file_read", {"path": "missing.txt"}).wait(5)
    registry.invoke("add", {"a": 1}).wait(5)
    assert list(registry.history.to_dataframe()["family"]) == ["listing", "failure", "json"]


# ── no value erases a row ───────────────────────────────────────────────────────────────


class Unencodable:
    def __repr__(self) -> str:
        return "<Unencodable \ud800>"


def awkward_values():
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    cycle: dict = {}
    cycle["self"] = cycle
    return {
        "surrogate": "\ud800 lone",
        "surrogate key \udfff": 1,
        "bytes": b"\xff\xfe not utf-8",
        "nan": float("nan"),
        "inf": [float("inf"), float("-inf")],
        "wide": 10**30,
        "huge": 10**5000,
        "deep": deep,
        "object": Unencodable(),
        "cycle": cycle,
        (1, 2): "tuple key",
    }


def test_no_argument_value_erases_a_row(tmp_path):
    registry = make_registry(tmp_path)
    calls = [
        registry.invoke("add", awkward_values()),
        registry.invoke("add", {"a": "\ud800"}),
        registry.invoke("no such \udcff tool", {"a": b"\x80"}),
        registry.invoke("add", ["not", "a", "dict", float("nan")]),
    ]
    for call in calls:
        call.wait(10)
    registry.history.close()
    rows = wb.History(tmp_path / "history.sqlite").rows()
    assert [row["call_id"] for row in rows] == [call.id for call in calls]
    for row in rows:
        assert row["tool"] and row["status"] == "error" and row["kind"]
        assert row["receipt"] and isinstance(row["canonical"], dict)
        row["wire"].encode("utf-8")
        json.dumps(row, ensure_ascii=False, default=str).encode("utf-8")
    first = rows[0]
    raw = first["raw_args"]
    assert raw["surrogate"] == "\\ud800 lone"
    assert raw["surrogate key \\udfff"] == 1
    assert raw["bytes"] == "\\xff\\xfe not utf-8"
    assert raw["nan"] == "NaN" and raw["inf"] == ["Infinity", "-Infinity"]
    assert raw["wide"] == 10**30  # JSON has no integer limit; Python reads it back exactly
    assert raw["huge"].startswith("<integer of ")
    assert raw["object"].startswith("<Unencodable")
    assert raw["cycle"] == {"self": "<cut: contains itself>"}
    assert raw["(1, 2)"] == "tuple key"
    depth, value = 0, raw["deep"]
    while isinstance(value, list):
        depth, value = depth + 1, value[0]
    assert depth < 200 and value.startswith("<cut: nested deeper")
    warnings_text = " ".join(first["warnings"])
    for word in ("surrogates", "bytes", "NaN", "too long", "nesting", "repr", "itself"):
        assert word in warnings_text, word
    assert rows[2]["tool"] == "no such \\udcff tool"


def test_a_row_that_cannot_be_decoded_is_named_and_every_other_row_is_read(tmp_path):
    registry = make_registry(tmp_path)
    calls = [registry.invoke("add", {"a": i}).wait(5) for i in range(4)]
    registry.history.close()
    bad_record, bad_canonical = calls[1].call_id, calls[2].call_id
    with sqlite3.connect(tmp_path / "history.sqlite") as conn:
        conn.execute("UPDATE calls SET record = '{broken' WHERE call_id = ?", (bad_record,))
        conn.execute(
            "UPDATE calls SET record = json_set(record, '$.canonical', json('{\"status\": 5}')),"
            " retryable = 'maybe' WHERE call_id = ?",
            (bad_canonical,),
        )
    history = wb.History(tmp_path / "history.sqlite")
    with pytest.warns(HistoryWarning):
        rows = history.rows()
    assert [row["call_id"] for row in rows] == [envelope.call_id for envelope in calls]
    assert rows[1]["tool"] == "add" and rows[1]["status"] == "success"
    assert any("not JSON" in warning for warning in rows[1]["warnings"])
    with pytest.warns(HistoryWarning):
        envelopes = history.envelopes()
    assert [envelope.call_id for envelope in envelopes] == [calls[0].call_id, calls[3].call_id]
    named = " ".join(problem.message for problem in history.problems)
    assert bad_record in named and bad_canonical in named
    assert len(history.to_dataframe()) == 4
    result = wb.compact(history, budget_chars=10)
    assert len(result.receipts) == 2


def test_repeated_model_call_ids_keep_every_row(tmp_path):
    registry = make_registry(tmp_path)
    calls = [registry.invoke("add", {"a": i}, call_id="call_1") for i in range(5)]
    for call in calls:
        call.wait(5)
    rows = registry.history.rows()
    assert len(rows) == 5
    assert len({row["call_id"] for row in rows}) == 5
    assert [row["model_call_id"] for row in rows] == ["call_1"] * 5
    # Rows are kept in the order the calls ended, which concurrent calls do not promise.
    assert sorted(row["arguments"]["a"] for row in rows) == [0, 1, 2, 3, 4]
    assert registry.history.get("call_1")["arguments"] == rows[-1]["arguments"]  # the latest
    for row in rows:
        assert registry.history.get(row["call_id"])["arguments"] == row["arguments"]


def test_rows_have_the_columns_later_work_needs(tmp_path):
    registry = make_registry(tmp_path)
    registry.invoke("add", {"a": 1}).wait(5)
    frame = registry.history.to_dataframe()
    fields = list(CallRecord.__dataclass_fields__)
    assert list(registry.history.to_dataframe(tokens=None).columns) == fields
    fields.insert(fields.index("receipt_chars") + 1, "receipt_tokens")
    assert list(frame.columns) == fields
    for name in ("model_call_id", "parent_call_id", "run_id", "message_id"):
        assert name in frame.columns


OLD_SCHEMA = """
CREATE TABLE calls (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    call_id TEXT UNIQUE, tool, family, state, status, kind, retryable, summary_text,
    elapsed_ms, queued_at, started_at, ended_at, receipt_chars, truncated, killed_by,
    terminated, denied, timed_out, injected, dry_run,
    record TEXT
)
"""


def test_a_file_written_by_the_previous_schema_opens_and_takes_new_rows(tmp_path):
    path = tmp_path / "history.sqlite"
    canonical = wb.success("add", 7).replace(call_id="call_old").canonical()
    with sqlite3.connect(path) as conn:
        conn.executescript(OLD_SCHEMA)
        conn.execute(
            "INSERT INTO calls (call_id, tool, status, retryable, record) VALUES (?, ?, ?, ?, ?)",
            (
                "call_old",
                "add",
                "success",
                None,
                json.dumps({"canonical": canonical, "receipt": "7"}),
            ),
        )
    registry = make_registry(tmp_path)
    new = registry.invoke("add", {"a": 1}).wait(5)
    rows = registry.history.rows()
    assert [row["call_id"] for row in rows] == ["call_old", new.call_id]
    assert rows[0]["receipt"] == "7" and rows[0]["model_call_id"] is None
    assert [e.call_id for e in registry.history.envelopes()] == ["call_old", new.call_id]


# ── the contract with the runtime ───────────────────────────────────────────────────────


def test_then_runs_only_once_the_row_is_in_the_file(tmp_path):
    path = tmp_path / "history.sqlite"
    history = wb.History(path)
    seen: list[tuple[str | None, int]] = []
    done = threading.Event()

    def then(problem: str | None) -> None:
        with contextlib.closing(sqlite3.connect(path)) as conn:
            count = conn.execute("SELECT COUNT(*) FROM calls WHERE call_id = 'c1'").fetchone()[0]
        seen.append((problem, count))
        done.set()

    history.append(CallRecord(call_id="c1", tool="t", status="success"), then)
    assert done.wait(10)
    assert seen == [(None, 1)]
    history.close()


def test_then_names_the_problem_when_the_row_is_held_in_the_spill(tmp_path):
    path = tmp_path / "history.sqlite"
    history = wb.History(path, busy_timeout=0.05, attempts=1)
    history.append(CallRecord(call_id="c0", tool="t"))
    history.flush()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    problems: list[str | None] = []
    done = threading.Event()
    try:
        with pytest.warns(HistoryWarning, match="locked"):
            history.append(
                CallRecord(call_id="c1", tool="t"), lambda p: (problems.append(p), done.set())
            )
            assert done.wait(10)
            history.flush()
        assert problems[0] is not None and "held in" in problems[0] and "locked" in problems[0]
        assert [row["call_id"] for row in history.rows()] == ["c0", "c1"]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    history.close()
    assert [row["call_id"] for row in wb.History(path).rows()] == ["c0", "c1"]


def test_none_keeps_the_history_in_memory(tmp_path):
    history = wb.History(None)
    assert history.in_memory and history.directory is None
    history.append(CallRecord(call_id="c1", tool="t"))
    assert [row["call_id"] for row in history.rows()] == ["c1"]
    assert history.health().ok


def test_rows_without_an_id_never_replace_each_other(tmp_path):
    history = wb.History(tmp_path / "history.sqlite")
    for tool in ("a", "b", "c"):
        history.record({"tool": tool})
    assert [row["tool"] for row in history.rows()] == ["a", "b", "c"]
    assert all(row["call_id"] for row in history.rows())


def test_invoke_many_keeps_queue_time_apart_from_run_time(tmp_path):
    # One slot, five calls of 0.2 s: the last waits about 0.8 s for its slot but runs 0.2 s.
    registry = make_registry(tmp_path, max_concurrency=1)
    calls = registry.invoke_many([("pause", {"seconds": 0.2})] * 5)
    for call in calls:
        call.wait(10)
    last = calls[-1]
    assert last.queued >= 0.6
    assert last.elapsed < last.queued
    registry.history.flush()
    frame = registry.history.to_dataframe().set_index("call_id")
    row = frame.loc[last.id]
    assert row["queued_ms"] >= 600
    assert 190 <= row["elapsed_ms"] < row["queued_ms"]
    # Run time and queue time add up to the whole time from invocation to the end.
    whole = (row["ended_at"] - row["queued_at"]).total_seconds() * 1000
    assert abs(row["elapsed_ms"] + row["queued_ms"] - whole) < 50
    first = frame.loc[calls[0].id]
    assert first["queued_ms"] < 100
