"""Which rule recognises a received result, and the receipt the model saw beside workbench's
rendering of it."""

from __future__ import annotations

import json
import re

import pytest

import workbench as wb
from workbench.families import render
from workbench.families._diff import diff_html
from workbench.transcripts import Rule, compare_receipts, diff_texts, recognise

CANONICAL = {
    "tool_name": "t",
    "status": "error",
    "summary_text": "boom",
    "result": None,
    "error": {"kind": "timeout", "message": "boom", "retryable": True},
    "warnings": [],
    "artifacts": [],
    "call_id": None,
}


@pytest.mark.parametrize(
    ("text", "flagged", "rule", "status", "kind"),
    [
        ("[REJECTED] not allowed", False, Rule.LEGACY_PREFIX, "error", "rejected"),
        ("  [TIMEOUT] slow", False, Rule.LEGACY_PREFIX, "error", "timeout"),
        (json.dumps(CANONICAL), False, Rule.CANONICAL_RECORD, "error", "timeout"),
        ('{"ok": false, "error": {"kind": "not_found", "message": "x"}}', False,
         Rule.NESTED_ERROR, "error", "not_found"),
        ('{"ok": true, "result": [1, 2]}', False, Rule.WIRE_ENVELOPE, "success", None),
        ('{"ok": false, "kind": "invalid_args", "message": "m"}', True,
         Rule.WIRE_ENVELOPE, "error", "invalid_args"),
        ("disk full", True, Rule.FLAGGED_ERROR, "error", "execution_error"),
        ('{"ok": true, "result": 1}', True, Rule.FLAGGED_ERROR, "error", "execution_error"),
        ('{"rows": 3}', False, Rule.JSON_VALUE, "success", None),
        ("[1, 2", False, Rule.PLAIN_TEXT, "success", None),
        ("Error: it broke", False, Rule.PLAIN_TEXT, "success", None),
        ('{"status": "success", "tool_name": "t", "extra": 1}', False, Rule.JSON_VALUE,
         "success", None),
        ('{"success": false, "error": "quota exceeded"}', False, Rule.SUCCESS_FALSE, "error",
         "execution_error"),
        ('{"success": false}', False, Rule.SUCCESS_FALSE, "error", "execution_error"),
        ('{"success": true, "error": null, "rows": 2}', False, Rule.JSON_VALUE, "success", None),
        ('{"error": "no such city"}', False, Rule.ERROR_FIELD, "error", "execution_error"),
        ('{"error": {"code": 404, "detail": "gone"}}', False, Rule.ERROR_FIELD, "error",
         "execution_error"),
        ('{"error": null, "value": 1}', False, Rule.JSON_VALUE, "success", None),
        ('{"error": ""}', False, Rule.JSON_VALUE, "success", None),
        ("1 validation error for add\nx\n  Field required\n\nFix the errors and try again.",
         False, Rule.RETRY_PROMPT, "error", "invalid_args"),
        ("Unknown tool name: 'x'.\n\nFix the errors and try again.\n", False,
         Rule.RETRY_PROMPT, "error", "execution_error"),
        ("Error: ValueError('x')\n Please fix your mistakes.", False, Rule.RETRY_PROMPT,
         "error", "execution_error"),
        ("An error occurred while running the tool. Please try again. Error: boom", False,
         Rule.RETRY_PROMPT, "error", "execution_error"),
        ("Please fix the errors and try again later, said the docs", False, Rule.PLAIN_TEXT,
         "success", None),
    ],
)  # fmt: skip
def test_rules_in_order(text, flagged, rule, status, kind):
    found = recognise(text, tool="t", flagged_error=flagged, call_id="c1")
    assert found.rule is rule
    assert found.envelope.status == status
    assert (None if found.envelope.error is None else found.envelope.error.kind.value) == kind
    assert found.envelope.tool_name == "t"
    assert found.envelope.call_id == "c1"


def test_a_flagged_error_keeps_the_text_as_its_message():
    found = recognise("  line one\nline two ", tool="t", flagged_error=True, call_id=None)
    assert found.envelope.error.message == "line one\nline two"
    empty = recognise("", tool="t", flagged_error=True, call_id=None)
    assert empty.envelope.error.message == "the tool failed and sent no message"


def test_plain_text_is_a_text_result_with_the_text_unchanged():
    text = "Grüße\n  indented ✓\n"
    found = recognise(text, tool="t", flagged_error=False, call_id=None)
    assert found.envelope.result == {"text": text}


def test_diff_marks_only_what_differs():
    diff = diff_texts("exit 0\nHallo Welt\n", "exit 0\nHallo Erde\n")
    assert not diff.same
    assert diff.segments == (
        ("same", "exit 0\nHallo "),
        ("removed", "Welt"),
        ("added", "Erde"),
        ("same", "\n"),
    )
    assert diff.changed_chars == 8
    assert diff_texts("n=1, ok", "n=2, ok").segments == (
        ("same", "n="),
        ("removed", "1"),
        ("added", "2"),
        ("same", ", ok"),
    )
    assert "-Hallo Welt" in diff.unified() and "+Hallo Erde" in diff.unified()
    assert str(diff_texts("a", "a")) == "identical"


def test_diff_html_escapes_both_sides():
    html = diff_html(diff_texts("<script>x</script>", "<b>y</b>"))
    assert "<script" not in html and "<b>" not in html
    assert "&lt;" in html and "script" in html
    assert "wb-diff-removed" in html and "wb-diff-added" in html


def test_identical_texts_are_shown_once_and_said_identical():
    receipt = "".join(f"line {n}\n" for n in range(3000))
    html = diff_html(diff_texts(receipt, receipt))
    assert "identical" in html
    assert html.count("line 1234\n") == 1


def test_a_diff_opens_at_its_first_difference_with_unchanged_runs_folded():
    left = "".join(f"line {n}\n" for n in range(3000))
    right = left.replace("line 1500\n", "lane 1500\n")
    html = diff_html(diff_texts(left, right))
    left_side = html.split("wb-diff-left")[1].split("wb-diff-right")[0]
    # What shows before the first difference, folded runs left out: a few lines of context.
    before = left_side.split("wb-diff-removed")[0]
    shown = re.sub(r"<details.*?</details>", "", before, flags=re.S)
    assert shown.count("line ") <= 3, shown
    assert "1,497 unchanged lines" in before
    after = left_side.split("wb-diff-removed")[1]
    assert after.split("<details")[0].count("line ") <= 3  # a little context, then the fold
    assert "1,497 unchanged lines" in after
    assert "line 2999" in after  # folded, not dropped: a click opens it


def test_changed_text_is_coloured_from_the_theme_not_on_fixed_pale_backgrounds():
    html = diff_html(diff_texts("a b", "a c"))
    assert "#fdd" not in html and "#dfd" not in html
    for name in ("wb-diff-removed", "wb-diff-added"):
        # Every rule that styles the changed text, and what it sets.
        declarations = " ".join(
            match[1] for match in re.finditer(rf"[^}}]*\.{name}[^{{]*\{{([^}}]*)\}}", html)
        )
        assert "background: color-mix(in srgb, var(--jp-" in declarations, name
        # The text colour is the theme's, never left to a pale tint's mercy.
        assert "color: var(--jp-content-font-color1" in declarations, name


def test_receipt_seen_beside_workbench_rendering():
    history = wb.transcripts.load(
        [
            {"role": "assistant", "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "t", "arguments": "{}"}},
                {"id": "b", "type": "function", "function": {"name": "t", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "a", "content": '{"ok":true,"result":{"n":1}}'},
            {"role": "tool", "tool_call_id": "b", "content": "plain words"},
        ]
    )  # fmt: skip
    wire = history.compare("a")
    assert wire.left == '{"ok":true,"result":{"n":1}}'  # byte for byte what the model got
    envelope = wb.Envelope.from_canonical(history.get("a")["canonical"])
    assert wire.right == render(envelope)
    assert not wire.same
    plain = history.compare("b")
    assert plain.left == "plain words"
    assert plain.same  # a text result renders as its text
    assert compare_receipts(history.get("b")) == plain
    with pytest.raises(KeyError):
        history.compare("zzz")


def test_the_new_rules_give_the_message_the_model_read():
    found = recognise('{"success": false, "error": "quota exceeded"}', tool="t",
                      flagged_error=False, call_id=None)  # fmt: skip
    assert found.envelope.error.message == "quota exceeded"
    assert found.envelope.error.details == {"success": False, "error": "quota exceeded"}
    nested = recognise('{"error": {"code": 404, "detail": "gone"}}', tool="t",
                       flagged_error=False, call_id=None)  # fmt: skip
    assert nested.envelope.error.message == "gone"


def upper_case_failures(receipt: str, tool: str) -> wb.Envelope | None:
    """A team's own convention: a result that starts with FAILED: is a failure."""
    if receipt.startswith("FAILED:"):
        return wb.failure("execution_error", receipt[7:].strip(), tool=tool)
    return None


CUSTOM_RUN = [
    {"role": "assistant", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "t", "arguments": "{}"}},
        {"id": "b", "type": "function", "function": {"name": "t", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "a", "content": "FAILED: disk full"},
    {"role": "tool", "tool_call_id": "b", "content": "all good"},
]  # fmt: skip


def test_a_user_rule_given_to_load_names_itself_in_the_row():
    history = wb.transcripts.load(CUSTOM_RUN, rules=[("failed_prefix", upper_case_failures)])
    assert list(history.to_dataframe()["rule"]) == ["failed_prefix", "plain_text"]
    row = history.get("a")
    assert row["status"] == "error" and row["kind"] == "execution_error"
    assert row["canonical"]["error"]["message"] == "disk full"
    # without the rule the same text is a success
    assert wb.transcripts.load(CUSTOM_RUN).get("a")["status"] == "success"


def test_add_rule_applies_to_every_later_load_until_removed():
    wb.transcripts.add_rule("failed_prefix", upper_case_failures)
    try:
        assert [rule.name for rule in wb.transcripts.added_rules()] == ["failed_prefix"]
        assert wb.transcripts.load(CUSTOM_RUN).get("a")["status"] == "error"
    finally:
        wb.transcripts.remove_rule("failed_prefix")
    assert wb.transcripts.load(CUSTOM_RUN).get("a")["status"] == "success"
    with pytest.raises(KeyError, match="no added rule named 'failed_prefix'"):
        wb.transcripts.remove_rule("failed_prefix")


def test_a_user_rule_that_raises_is_named_and_skipped():
    def broken(receipt: str, tool: str) -> wb.Envelope | None:
        raise RuntimeError("bug in my rule")

    history = wb.transcripts.load(CUSTOM_RUN, rules=[("broken", broken)])
    row = history.get("b")
    assert history.to_dataframe()["rule"].tolist() == ["plain_text", "plain_text"]
    assert "rule 'broken' raised RuntimeError: bug in my rule" in row["warnings"]


def test_a_bad_rule_is_refused_before_anything_is_read():
    with pytest.raises(ValueError, match="built-in rule"):
        wb.transcripts.load(CUSTOM_RUN, rules=[("plain_text", upper_case_failures)])
    with pytest.raises(TypeError, match="must be callable"):
        wb.transcripts.add_rule("x", "not a function")
    with pytest.raises(TypeError, match="a \\(name, check\\) pair"):
        wb.transcripts.load(CUSTOM_RUN, rules=[upper_case_failures])


RECEIPTS = [
    "plain text",
    "",
    "   ",
    "Zeile 1: Grüße ✓\nZeile 2",
    '{"path": "a.py", "zeilen": 3}',
    '[1, 2, {"a": null}]',
    '{"ok": false, "kind": "not_found", "message": "gone"}',
    '{"ok": true, "result": {"x": 1}}',
    '{"success": false, "error": "nope"}',
    '{"error": {"message": "bad"}}',
    "[REJECTED] not allowed",
    "An error occurred while running the tool. Please try again.",
    '{"value": NaN}',
    "[" * 201 + "]" * 201,
    "[" * 150 + "]" * 150,
    "[not json",
    '{"tool_name": "t", "status": "success", "summary_text": "s", "result": 1}',
]


@pytest.mark.parametrize("receipt", RECEIPTS)
@pytest.mark.parametrize("flagged", [False, True])
def test_an_imports_record_is_what_the_rules_envelope_records(receipt, flagged):
    """recognise_record writes plain successes without an envelope: the same record, rule and
    problems as recognise's envelope, whatever the result."""
    from workbench.transcripts._rules import recognise_record

    found = recognise(receipt, tool="read", flagged_error=flagged, call_id="c1")
    canonical, rule, problems = recognise_record(
        receipt, tool="read", flagged_error=flagged, call_id="c1"
    )
    assert (canonical, rule, problems) == (found.envelope.canonical(), found.rule, found.problems)
