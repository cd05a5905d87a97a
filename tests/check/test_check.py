"""The check's parts in process: what each resilience case is expected to give, the allow-list
format, and a report built from a registry (the command line is in test_check_command)."""

from __future__ import annotations

import pytest

import workbench as wb
from workbench.check import AllowList, AllowRule, Finding, check_registry, expected_outcomes

CLOSED = {
    "type": "object",
    "properties": {
        "n": {"type": "integer"},
        "inner": {"type": "object", "properties": {"a": {"type": "string"}}},
    },
    "required": ["n"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("baseline", {"accepted", "coerced"}),
        ("string_integer:n", {"accepted", "coerced"}),
        ("null_optional:inner", {"accepted", "coerced"}),
        ("wrong_type:n", {"refused"}),
        ("missing:n", {"refused"}),
        ("null_arguments", {"refused"}),
        ("unknown_key", {"refused"}),
        ("unknown_key:inner", {"accepted", "coerced", "refused"}),  # inner is an open object
        ("long_string:inner.a", {"accepted", "coerced", "refused"}),
    ],
)
def test_expected_outcomes(case, expected):
    assert expected_outcomes(case, CLOSED) == expected


def test_null_arguments_are_forgiven_when_nothing_is_required():
    assert expected_outcomes("null_arguments", {**CLOSED, "required": []}) == {
        "accepted",
        "coerced",
    }


def test_allow_list_lines_comments_and_globs():
    allow = AllowList.parse(
        "# header\n\ntag openai-strict free-form mapping  # why\n* long_string:*\n"
    )
    assert allow.rules == (
        AllowRule("tag", "openai-strict", "free-form mapping", 3),
        AllowRule("*", "long_string:*", "", 4),
    )
    finding = Finding("any", "resilience", "long_string:q", "error", "p", "f")
    assert allow.rules[1].matches(finding)
    assert not allow.rules[0].matches(finding)


def test_allow_list_refuses_a_line_without_a_target():
    with pytest.raises(ValueError, match="allow-list line 2: expected TOOL TARGET"):
        AllowList.parse("ok openai\nlonely\n")


def test_a_report_in_process_counts_failures_by_severity():
    tools = wb.Registry(history=":memory:")

    @tools.tool
    def count(n: int, step: int = 1) -> int:
        """Count.

        Args:
            n: Where to stop.
            step: Step size.
        """
        return n

    report = check_registry(tools)
    assert report.failures() == []
    assert [f.target for f in report.failures("warning")] == ["openai-strict"]
    assert report.dry_runs == 1 and report.cases["count"] > 10
    assert report.to_json()["ok"] is True and report.to_json("warning")["ok"] is False
    with pytest.raises(KeyError, match="no tool named nope"):
        check_registry(tools, names=["nope"])
