"""The history: a real SQLite file, one row per call, complete and safe under concurrency."""

from __future__ import annotations

import asyncio
import sqlite3

import workbench as wb


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
