"""The canonical envelope: exclusivity, builders, summaries and the escaped notebook display."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import workbench as wb


def test_success_requires_null_error():
    error = wb.ToolError(kind="timeout", message="slow")
    with pytest.raises(ValidationError, match="null error"):
        wb.Envelope(tool_name="t", status="success", error=error)


def test_error_requires_an_error():
    with pytest.raises(ValidationError, match="requires an error"):
        wb.Envelope(tool_name="t", status="error")


def test_error_requires_null_result():
    error = wb.ToolError(kind="timeout", message="slow")
    with pytest.raises(ValidationError, match="null result"):
        wb.Envelope(tool_name="t", status="error", error=error, result={"a": 1})


@pytest.mark.parametrize("result", [None, 0, False, "", [], {}, {"a": [1, None]}, "text", 3.5])
def test_success_result_may_be_any_json_value_null_included(result):
    envelope = wb.success("t", result)
    assert envelope.status == "success" and envelope.ok
    assert envelope.result == result
    assert envelope.error is None


def test_envelopes_are_immutable_and_replace_revalidates():
    envelope = wb.success("t", 1)
    with pytest.raises(ValidationError):
        envelope.status = "error"  # type: ignore[misc]
    assert envelope.replace(call_id="c1").call_id == "c1"
    with pytest.raises(ValidationError):
        envelope.replace(status="error")


def test_text_is_sugar_for_a_text_result():
    envelope = wb.success("notes", text="Found 3 matches\n...")
    assert envelope.result == {"text": "Found 3 matches\n..."}
    assert envelope.summary_text == "Found 3 matches"
    with pytest.raises(ValueError, match="either result or text"):
        wb.success("notes", {"a": 1}, text="x")


def test_success_builder_keeps_warnings_and_summary():
    envelope = wb.success("t", {"n": 1}, warnings=["slow disk"], summary="did it")
    assert envelope.warnings == ("slow disk",)
    assert envelope.summary_text == "did it"


def test_failure_builder_sets_every_field():
    envelope = wb.failure(
        "invalid_args",
        "Missing required argument `content` (string).",
        tool="sandbox_write_file",
        field="content",
        expected="non-empty string of file contents",
        details={"got": None},
        recovery_hint="pass content",
    )
    assert envelope.status == "error" and not envelope.ok
    assert envelope.result is None
    error = envelope.error
    assert error is not None
    assert (error.kind, error.field, error.expected) == (
        wb.ErrorKind.INVALID_ARGS,
        "content",
        "non-empty string of file contents",
    )
    assert error.details == {"got": None}
    assert error.recovery_hint == "pass content"
    assert error.retryable is True
    assert envelope.summary_text == "Missing required argument `content` (string)."


def test_listing_builder_matches_seed_000():
    envelope = wb.listing(
        "Desktop",
        [{"name": "notes.txt", "type": "file"}, {"name": "photos", "type": "directory"}],
    )
    assert envelope.canonical()["result"] == {
        "kind": "listing",
        "path": "Desktop",
        "entries": [
            {"name": "notes.txt", "path": "Desktop/notes.txt", "type": "file"},
            {"name": "photos", "path": "Desktop/photos", "type": "directory"},
        ],
        "entry_count": 2,
        "truncated": False,
    }
    assert envelope.summary_text == "2 entries in Desktop"


def test_listing_builder_counts_beyond_a_truncated_page_and_refuses_odd_types():
    envelope = wb.listing(".", [{"name": "a"}], truncated=True, entry_count=500, tool="file_read")
    assert envelope.result["entry_count"] == 500
    assert envelope.result["truncated"] is True
    assert envelope.result["entries"][0]["path"] == "a"
    with pytest.raises(ValueError, match="entry type"):
        wb.listing(".", [{"name": "a", "type": "socket"}])


def test_file_builder_carries_line_and_byte_metadata():
    envelope = wb.file_result("src/a.py", "x = 1\ny = 2\n", start_line=10, total_lines=40)
    assert envelope.result == {
        "kind": "file",
        "path": "src/a.py",
        "text": "x = 1\ny = 2\n",
        "start_line": 10,
        "end_line": 11,
        "selected_lines": 2,
        "total_lines": 40,
        "bytes": 12,
        "truncated": False,
    }


def test_canonical_is_the_seed_001_record():
    envelope = wb.failure("timeout", "ran past 120 s", tool="slow", recovery_hint="retry")
    envelope = envelope.replace(call_id="call_1")
    assert envelope.canonical() == {
        "tool_name": "slow",
        "status": "error",
        "summary_text": "ran past 120 s",
        "result": None,
        "error": {
            "kind": "timeout",
            "message": "ran past 120 s",
            "recovery_hint": "retry",
            "retryable": True,
        },
        "warnings": [],
        "artifacts": [],
        "call_id": "call_1",
    }
    assert wb.Envelope.from_canonical(envelope.canonical()) == envelope


def test_summary_is_always_present_short_and_one_line():
    long = "x" * 1000
    envelope = wb.success("t", summary="first line\nsecond line")
    assert envelope.summary_text == "first line"
    assert len(wb.success("t", summary=long).summary_text) <= 200
    assert wb.success("t").summary_text == "t succeeded"
    assert wb.success("t", [1, 2]).summary_text == "t returned a list of 2 items"
    assert wb.failure("execution_error", long).summary_text.endswith("…")


def test_results_become_plain_json():
    envelope = wb.success("t", {"tuple": (1, 2), "nan": float("nan"), "bytes": b"ab"})
    assert envelope.result == {"tuple": [1, 2], "nan": None, "bytes": "ab"}


@pytest.mark.parametrize(
    "exc,kind,retryable",
    [
        (FileNotFoundError(2, "No such file or directory", "gone.txt"), "not_found", False),
        (PermissionError(13, "Permission denied", "/root"), "rejected", False),
        (TimeoutError("took too long"), "timeout", True),
        (ConnectionRefusedError(111, "Connection refused"), "unavailable", True),
        (ValueError("bad value"), "execution_error", True),
        (ZeroDivisionError(), "execution_error", True),
    ],
)
def test_from_exception_maps_thrown_errors(exc, kind, retryable):
    envelope = wb.from_exception(exc, tool="reader")
    assert envelope.tool_name == "reader"
    assert envelope.error.kind == kind
    assert envelope.error.retryable is retryable
    assert envelope.error.details["exception"] == type(exc).__name__
    assert "Traceback" not in envelope.to_wire()


def test_from_exception_messages_are_readable():
    missing = wb.from_exception(FileNotFoundError(2, "No such file or directory", "gone.txt"))
    assert missing.error.message == "No such file or directory: gone.txt"
    assert missing.error.details["path"] == "gone.txt"
    assert wb.from_exception(ZeroDivisionError()).error.message == "ZeroDivisionError"
    assert wb.from_exception(ValueError("bad")).error.message == "ValueError: bad"


def test_tool_failure_exception_keeps_its_chosen_kind():
    exc = wb.ToolFailure("no_match", "nothing matched 'foo'", field="pattern")
    envelope = wb.from_exception(exc, tool="grep")
    assert (envelope.error.kind, envelope.error.field, envelope.tool_name) == (
        "no_match",
        "pattern",
        "grep",
    )


XSS = "<img src=x onerror=alert(1)><script>alert(2)</script>"


def test_notebook_display_escapes_tool_text():
    for envelope in (
        wb.success(XSS, {"html": XSS}, warnings=[XSS]),
        wb.failure("invalid_args", XSS, field=XSS, expected=XSS, tool=XSS),
    ):
        bundle = envelope._repr_mimebundle_()
        assert "<script>" not in bundle["text/html"]
        assert "<img" not in bundle["text/html"]
        assert "&lt;script&gt;" in bundle["text/html"]
        assert bundle["text/plain"]


def test_notebook_display_shows_status_kind_message_and_result():
    html = wb.failure("not_found", "no file", tool="file_read")._repr_mimebundle_()["text/html"]
    assert "not_found" in html and "no file" in html and "file_read" in html
    bundle = wb.success("calc", {"answer": 42})._repr_mimebundle_()
    assert "success" in bundle["text/html"] and "42" in bundle["text/html"]
    assert bundle["text/plain"].startswith("✓ calc")


def test_a_result_that_cannot_be_represented_ends_as_invalid_output():
    tools = wb.Registry(history=None)

    @tools.tool
    def huge() -> int:
        """A number too long to write."""
        return 10**5000

    @tools.tool
    def nested() -> dict:
        """A result inside a huge one."""
        return {"value": [1, 10**5000]}

    @tools.tool
    def deep() -> list:
        """Nesting past any limit."""
        value: list = []
        for _ in range(3000):
            value = [value]
        return value

    for name in ("huge", "nested", "deep"):
        call = tools.invoke(name)
        envelope = call.wait(10)
        assert envelope.error is not None and envelope.error.kind == "invalid_output", name
        assert call.receipt and call.receipt.encode("utf-8")


def test_the_envelope_html_takes_its_colours_from_the_theme():
    for envelope in (wb.success("t", {"a": 1}), wb.failure("not_found", "gone", tool="t")):
        html = envelope._repr_mimebundle_()["text/html"]
        assert not re.search(r"(color:|solid )#[0-9a-fA-F]{3,6}\b", html), html
        assert "var(--jp-content-font-color1" in html


# Every character str.splitlines ends a line at, other white space, and plain letters.
_LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_LINE_TEXT = st.lists(
    st.sampled_from([*_LINE_BREAKS, " ", "\t", "\x1f", "\u00a0", "\u3000", "ab", "ü"]),
    max_size=12,
).map("".join)


@settings(max_examples=400)
@given(_LINE_TEXT)
def test_a_summary_is_the_first_line_that_is_not_blank(text):
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    summary = wb.Envelope(tool_name="t", status="success", result={"text": text}).summary_text
    assert summary == (first or "t returned empty text")


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(
    tool=st.text(max_size=12),
    result=_JSON | st.builds(lambda text: {"text": text}, st.text()),
    call_id=st.none() | st.text(max_size=10),
)
def test_a_success_record_is_the_envelopes_own_canonical_record(tool, result, call_id):
    """The record an import writes without building an envelope is the envelope's record."""
    envelope = wb.Envelope(tool_name=tool, status="success", result=result, call_id=call_id)
    assert wb.envelope.success_record(tool, result, call_id) == envelope.canonical()
