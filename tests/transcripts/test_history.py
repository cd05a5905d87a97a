"""An imported run is an ordinary history: written to a file, read back, compacted, and shown
by the history view and inspector unchanged."""

from __future__ import annotations

from pathlib import Path

import workbench as wb

DATA = Path(__file__).parents[1] / "data" / "transcripts"


def test_import_to_a_file_reads_back_as_a_plain_history(tmp_path):
    target = tmp_path / "runs" / "history.sqlite"
    imported = wb.transcripts.load(DATA / "anthropic.json", history=target)
    expected = imported.rows()
    imported.close()
    reopened = wb.History(target)
    rows = reopened.rows()
    assert len(rows) == 5
    assert [row["receipt"] for row in rows] == [row["receipt"] for row in expected]
    assert [wb.transcripts.rule_of(row) for row in rows] == [
        "plain_text",
        "plain_text",
        "flagged_error",
        "wire_envelope",
        "legacy_prefix",
    ]
    frame = reopened.to_dataframe()
    assert list(frame["message_id"][:2]) == ["msg_01A", "msg_01A"]
    assert frame["run_id"].notna().all()
    reopened.close()


def test_importing_two_runs_into_one_file_keeps_both(tmp_path):
    target = tmp_path / "history.sqlite"
    first = wb.transcripts.load(DATA / "anthropic.json", history=target)
    second = wb.transcripts.load(DATA / "openai_responses.json", history=target)
    assert len(second) == 5 + 4
    assert set(second.to_dataframe()["run_id"]) == {
        "resp_67ccd2bed1ec8190b14f964abc054267",
        first.rows()[0]["run_id"],
    }
    first.close()
    second.close()


def test_dataframe_has_run_message_rule_and_preflight_columns():
    frame = wb.transcripts.load(DATA / "openai_chat.json").to_dataframe()
    for column in ("run_id", "message_id", "model_call_id", "rule", "preflight", "raw_args"):
        assert column in frame.columns
    assert list(frame.columns).index("rule") == list(frame.columns).index("message_id") + 1
    assert set(frame["state"]) == {"imported"}


def test_compaction_reads_an_imported_history():
    history = wb.transcripts.load(DATA / "openai_chat.json")
    result = wb.compact(history, budget_chars=300)
    assert len(result) == 6
    assert result.after_chars < result.before_chars
    # what compaction starts from is workbench's rendering of the recognised envelopes
    assert result.before_receipts[4] == wb.transcripts.rendering_of(history.rows()[4])


def test_history_view_and_inspector_show_imported_rows():
    from workbench.widgets.history import HistoryView

    history = wb.transcripts.load(DATA / "openai_responses.json")
    view = HistoryView(history)
    assert [row["call_id"] for row in view.table.rows] == [
        f"resp_67ccd2bed1ec8190b14f964abc054267:{n}" for n in range(4)
    ]
    view.select("resp_67ccd2bed1ec8190b14f964abc054267:1")
    html = view.to_html()
    assert "wb-inspector" in html
    assert "[TIMEOUT] weather service did not answer within 10 s" in html


def test_calls_without_a_result_compact_like_any_other(tmp_path):
    import warnings

    history = wb.transcripts.load(DATA / "openai_chat_pairs.jsonl", history=tmp_path / "h.sqlite")
    unanswered = [row for row in history.rows() if row["canonical"] is None]
    assert [row["model_call_id"] for row in unanswered] == ["call_Bk5"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning for a call the run never answered
        result = wb.compact(history, budget_chars=0, keep_recent=0)
    assert len(result.envelopes) == len(history) == 5
    last = result.envelopes[-1]
    assert last.tool_name == "book_table" and last.call_id == "call_Bk5"
    assert result.before_receipts[-1] == ""  # the model had nothing of it, and costs nothing
    assert history.problems == []
    # and reopened from its file, where only the rows are left, it is the same
    history.close()
    reopened = wb.History(tmp_path / "h.sqlite")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = wb.compact(reopened, budget_chars=0, keep_recent=0)
    assert again.receipts == result.receipts
    reopened.close()
