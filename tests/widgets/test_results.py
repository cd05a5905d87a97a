"""Result views by family, from envelopes of real calls: text as sanitised markdown, JSON as a
collapsible tree, command previews and warnings, numbered file lines; every view escaped."""

from __future__ import annotations

import pytest

import workbench as wb
from tests.widgets.support import XSS, assert_escaped
from workbench.widgets import FailureCard, ListingTree, result_view
from workbench.widgets.results import ResultView, result_html


@pytest.fixture
def builtins(tools, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    return wb.builtins.register(tools, root=root)


def run(tools, name, args=None):
    call = tools.invoke(name, args)
    call.wait(10)
    return call


def test_text_is_sanitised_markdown(tools):
    @tools.tool(family="text")
    def say(text: str) -> str:
        return text

    links = "[site](https://example.com) [js](javascript:alert(1))"
    source = f"# Title\n**bold** and `code`\n{links}\n{XSS}"
    call = run(tools, "say", {"text": source})
    view = result_view(call.envelope, call=call)
    assert isinstance(view, ResultView)
    html = view.body.value
    assert "<h1>Title</h1>" in html and "<strong>bold</strong>" in html
    assert "<code>code</code>" in html
    assert "<a href='https://example.com'" in html
    assert "href='javascript" not in html and "[js](javascript:alert(1))" in html
    assert_escaped(html)


def test_json_is_a_collapsible_tree_with_everything_escaped(tools):
    @tools.tool
    def data() -> dict:
        return {"items": [1, 2, {"deep": True}], XSS: XSS, "none": None}

    call = run(tools, "data")
    html = result_view(call.envelope).body.value
    assert "<details open><summary>" in html  # the top level is open
    assert "[…] 3 items" in html and "{…} 1 key" in html
    assert "<details><summary>" in html  # deeper levels start closed
    assert "wb-json-null" in html
    assert_escaped(html)


def test_a_json_result_too_large_to_inline_shows_its_preview_and_artifact(tools):
    @tools.tool
    def big() -> list:
        return list(range(20_000))

    call = run(tools, "big")
    html = result_html(call.envelope)
    assert "wb-json-preview" in html
    assert "full result JSON" in html and call.envelope.artifacts[0].path in html


def test_command_shows_exit_code_previews_warnings_and_artifacts(tools, builtins):
    call = run(tools, "shell_exec", {"command": f"echo '{XSS}'; echo oops >&2; exit 3"})
    html = result_html(call.envelope)
    assert "exit code 3" in html and "wb-bad" in html
    assert "<pre class='wb-stdout'>" in html and "<pre class='wb-stderr'>oops\n</pre>" in html
    assert_escaped(html)

    quiet = run(tools, "shell_exec", {"command": "true | cat"})
    assert "⚠" in result_html(quiet.envelope)  # exit 0 with no output after a pipe

    long = run(tools, "shell_exec", {"command": "seq 1 20000"})
    html = result_html(long.envelope)
    assert "full stdout" in html and "read more with artifact_read" in html
    assert "<div class='wb-label'>artifacts</div>" in html


def test_file_lines_are_numbered_from_the_offset(tools, builtins):
    (builtins.root / "poem.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    call = run(tools, "file_read", {"path": "poem.txt", "offset": 4, "limit": 3})
    html = result_html(call.envelope)
    assert "poem.txt (lines 4-6 of 10)" in html
    assert "<td class='wb-lineno'>4</td><td>line 4</td>" in html
    assert "<td class='wb-lineno'>6</td><td>line 6</td>" in html
    assert "line 7" not in html


def test_a_cut_file_keeps_the_numbers_of_its_tail(tools, builtins):
    (builtins.root / "long.txt").write_text("".join(f"row {i}\n" for i in range(1, 20_001)))
    call = run(tools, "file_read", {"path": "long.txt"})
    html = result_html(call.envelope)
    assert "<td class='wb-lineno'>1</td><td>row 1</td>" in html
    assert "<td class='wb-lineno'>20000</td><td>row 20000</td>" in html
    assert "class='wb-cut'" in html and "output truncated" in html


def test_file_text_is_escaped(tools, builtins):
    (builtins.root / "page.html").write_text(XSS + "\n")
    call = run(tools, "file_read", {"path": "page.html"})
    assert_escaped(result_html(call.envelope))


def test_views_by_family_for_listings_and_failures(tools, builtins):
    listing = run(tools, "file_read", {"path": "."})
    assert isinstance(result_view(listing.envelope, call=listing), ListingTree)
    missing = run(tools, "file_read", {"path": "nowhere"})
    assert isinstance(result_view(missing.envelope, call=missing), FailureCard)
    assert "wb-failure" in result_html(missing.envelope)


def test_every_view_has_static_html_in_its_mimebundle(tools):
    @tools.tool
    def one() -> int:
        return 1

    call = run(tools, "one")
    bundle = result_view(call.envelope)._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "<div class='wb-result wb-result-json'>" in bundle["text/html"]


def test_a_text_card_shows_its_first_line_once_and_never_as_raw_markdown(tools):
    @tools.tool(family="text")
    def greet(name: str) -> str:
        return f"**Hello, {name}!**\nNice to meet you."

    call = run(tools, "greet", {"name": "Ada"})
    html = wb.widgets.card(call).static_html()
    # What the card shows (the collapsed receipt below it is the text verbatim, as sent).
    result = html.split("<div class='wb-result", 1)[1].split("class='wb-receipt'")[0]
    assert "**" not in result
    assert result.count("Hello, Ada!") == 1
    assert "<strong>Hello, Ada!</strong>" in result


def test_a_text_summary_of_its_own_is_kept_above_the_text(tools):
    envelope = wb.success("notes", text="Found 3 matches\n- one", summary="3 matches in src")
    assert "3 matches in src" in result_html(envelope)
