"""Head-and-tail truncation: the marker, the bound, and stability under re-truncation."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import workbench as wb

MARKER = re.compile(r"^\[output truncated: showing first (\d+) and last (\d+) lines\]$", re.M)


def numbered(n: int) -> str:
    return "".join(f"line {i}\n" for i in range(1, n + 1))


def test_text_under_the_limit_comes_back_unchanged():
    text = numbered(10)
    assert wb.truncate_for_model(text, max_chars=len(text)) is text
    assert wb.truncate_for_model("") == ""


def test_default_limit_is_50_000_characters():
    assert wb.truncate_for_model("x\n" * 25_000) == "x\n" * 25_000
    assert MARKER.search(wb.truncate_for_model("x\n" * 25_001))


def test_keeps_head_and_tail_with_an_exact_marker():
    text = numbered(1000)
    out = wb.truncate_for_model(text, max_chars=200)
    head, marker, tail = re.split(r"(\[output truncated[^\]]*\])\n", out)
    first, last = map(int, MARKER.search(out).groups())
    assert marker == f"[output truncated: showing first {first} and last {last} lines]"
    assert head == numbered(first)
    assert tail == "".join(f"line {i}\n" for i in range(1001 - last, 1001))
    assert first > 5 and last > 5


def test_a_single_enormous_line_is_cut_by_characters():
    out = wb.truncate_for_model("a" * 10_000 + "b" * 10_000, max_chars=100)
    assert out.startswith("a" * 50)
    assert out.endswith("b" * 50)
    assert "[output truncated: showing first 1 and last 1 lines]" in out


@given(st.text(), st.integers(min_value=0, max_value=500))
def test_never_exceeds_the_limit_plus_the_marker_line(text, limit):
    out = wb.truncate_for_model(text, max_chars=limit)
    if len(text) <= limit:
        assert out == text
    else:
        marker = MARKER.search(out)
        assert marker is not None
        assert len(out) <= limit + len(marker.group(0)) + 2


@given(st.lists(st.text(alphabet="abc é✓", max_size=30), max_size=60), st.integers(10, 300))
def test_truncating_twice_changes_nothing(lines, limit):
    text = "\n".join(lines)
    once = wb.truncate_for_model(text, max_chars=limit)
    assert wb.truncate_for_model(once, max_chars=limit) == once


@pytest.mark.parametrize("smaller", [150, 80, 20])
def test_re_truncating_smaller_keeps_one_marker_counting_original_lines(smaller):
    text = numbered(1000)
    once = wb.truncate_for_model(text, max_chars=400)
    twice = wb.truncate_for_model(once, max_chars=smaller)
    assert len(MARKER.findall(twice)) == 1
    first, _last = map(int, MARKER.search(twice).groups())
    if first:
        assert twice.startswith(numbered(first)[: smaller // 2])
    assert twice.endswith("line 1000\n")
