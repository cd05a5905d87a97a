"""The shared HTML helpers and the output tail: escaping, the markdown subset, JSON trees, and
a bounded tail whose cost per chunk does not grow with the output."""

from __future__ import annotations

import time

from tests.widgets.support import XSS, assert_escaped
from workbench.widgets._html import json_tree_html, markdown_html
from workbench.widgets._output import OutputTail, output_html


def test_markdown_escapes_first_then_formats():
    html = markdown_html(
        "## Head\n- one\n- **two**\n1. first\n> quoted\n```\n<b>code</b>\n```\n---\n" + XSS
    )
    assert "<h2>Head</h2>" in html
    assert "<ul><li>one</li><li><strong>two</strong></li></ul><ol><li>first</li></ol>" in html
    assert "<blockquote>quoted</blockquote>" in html
    assert "<pre><code>&lt;b&gt;code&lt;/b&gt;</code></pre>" in html
    assert "<hr>" in html
    assert_escaped(html)


def test_markdown_links_are_http_only_and_cannot_break_out():
    html = markdown_html(
        "[ok](https://a.example/?q=1&r=2) [no](javascript:alert(1)) [data](data:text/html,x) "
        '[quote](https://a.example/"onmouseover="alert(1))'
    )
    assert html.count("<a ") == 2
    assert "href='https://a.example/?q=1&amp;r=2'" in html
    assert "javascript" in html and "href='javascript" not in html
    assert "href='data" not in html
    assert "&quot;onmouseover=&quot;" in html and ' onmouseover="' not in html
    assert "rel='noopener noreferrer nofollow'" in html


def test_markdown_keeps_identifiers_and_code_literal():
    html = markdown_html("call file_read with `**not bold**` and snake_case_name")
    assert "file_read" in html and "snake_case_name" in html
    assert "<code>**not bold**</code>" in html and "<em>" not in html


def test_json_tree_is_bounded_and_escaped():
    deep: list = []
    node = deep
    for _ in range(200):
        node.append([])
        node = node[0]
    assert "wb-json" in json_tree_html(deep)  # no RecursionError
    wide = {f"k{i}": i for i in range(5_000)}
    html = json_tree_html(wide, max_nodes=100)
    assert "more</div>" in html and html.count("wb-json-key") < 110
    assert_escaped(json_tree_html({XSS: [XSS]}))


def test_the_tail_keeps_the_last_lines_within_both_limits():
    tail = OutputTail(max_lines=10, max_chars=1_000)
    for i in range(1_000):
        tail.append("stderr" if i % 7 == 0 else "stdout", f"line {i}\n")
    segments = tail.segments()
    text = "".join(t for _, t in segments)
    assert text.splitlines() == [f"line {i}" for i in range(990, 1_000)]
    assert ("stderr", "line 994\n") in segments
    tail = OutputTail(max_lines=1_000, max_chars=100)
    tail.append("stdout", "x" * 10_000)
    assert tail.segments() == [("stdout", "x" * 100)]


def test_appending_costs_the_chunk_not_the_output_so_far():
    tail = OutputTail()
    chunk = "y" * 1_000 + "\n"
    started = time.perf_counter()
    for _ in range(2_000):
        tail.append("stdout", chunk)
    first = time.perf_counter() - started
    for _ in range(200_000):  # 200 MB through the tail
        tail.append("stdout", chunk)
    per_chunk_later = (time.perf_counter() - started - first) / 200_000
    # Re-joining what was printed would cost milliseconds per chunk by now; appending, about
    # a microsecond whatever came before.
    assert per_chunk_later < max(5 * first / 2_000, 50e-6)
    assert sum(len(t) for _, t in tail.segments()) <= 20_000


def test_the_static_pane_escapes_and_marks_streams():
    html = output_html([("stdout", XSS), ("weird", "x")], "… 5 more bytes in the artifact")
    assert "<span class='wb-stdout'>&lt;img" in html and "wb-other" in html
    assert_escaped(html)


def test_compact_css_drops_comments_and_spaces_but_keeps_selectors() -> None:
    from workbench.widgets._html import compact_css

    css = "/* a note */\n.wb-card .wb-badge,\n.wb-x > p {\n  color: red;\n  margin: 0 1px;\n}\n"
    assert compact_css(css) == ".wb-card .wb-badge, .wb-x > p{color: red;margin: 0 1px;}"
