"""ANSI colour codes in output become coloured spans in cards; other escapes are dropped."""

from __future__ import annotations

import workbench as wb
from tests.widgets.support import XSS, assert_escaped
from workbench.widgets import card
from workbench.widgets._ansi import ansi_html, ansi_runs, strip_ansi

PYTEST_LINE = "\x1b[1m\x1b[31mFAILED\x1b[0m tests/test_x.py::test_y - \x1b[32m1 passed\x1b[39m\n"


def test_sgr_codes_become_classes_and_reset_ends_them():
    assert ansi_runs(PYTEST_LINE) == [
        ("wb-ansi-bold wb-ansi-fg-1", "FAILED"),
        ("", " tests/test_x.py::test_y - "),
        ("wb-ansi-fg-2", "1 passed"),
        ("", "\n"),
    ]


def test_bright_palette_and_true_colour_forms_read_their_parameters_as_one_code():
    assert ansi_runs("\x1b[94mblue\x1b[0m") == [("wb-ansi-fg-4", "blue")]
    assert ansi_runs("\x1b[38;5;2mgreen") == [("wb-ansi-fg-2", "green")]
    # 38;2;r;g;b: the 4 after 2;1;2;3 is underline, not a part of the colour
    assert ansi_runs("\x1b[38;2;1;2;3;4mx") == [("wb-ansi-underline", "x")]


def test_other_escape_sequences_are_dropped_and_text_is_escaped():
    text = f"\x1b]0;window title\x07\x1b[2K\x1b[1A\x1b[33m{XSS}\x1b[0m"
    html = ansi_html(text)
    assert "window title" not in html and "\x1b" not in html
    assert html.startswith("<span class='wb-ansi-fg-3'>&lt;img")
    assert_escaped(html)
    assert strip_ansi(PYTEST_LINE) == "FAILED tests/test_x.py::test_y - 1 passed\n"


def test_a_cards_output_keeps_colours_and_its_result_shows_them_too(tools, tmp_path):
    wb.builtins.register(tools, root=tmp_path)
    call = tools.invoke("shell_exec", {"command": "printf '\\033[31mred\\033[0m plain\\n'"})
    view = card(call)
    call.wait(10)
    html = view.static_html()
    assert "<span class='wb-ansi-fg-1'>red</span> plain" in html
    assert "\x1b" not in html.split("class='wb-receipt'")[0]


def test_no_escape_byte_reaches_any_html_a_call_makes(tools, tmp_path):
    """Escapes in a result, its summary and an error's message: every HTML form of the call
    (card, failure card, call, envelope) drops them or shows the control character's picture
    (the output pane draws their colours: the test above)."""

    @tools.tool
    def coloured() -> str:
        "Colours in the result."
        return "\x1b[32mgreen\x1b[0m result \x07 rings"

    @tools.tool
    def refused() -> dict:
        "Colours in the failure."
        return wb.failure("not_found", "\x1b[31mno\x1b[0m such \x1b]0;title\x07room")

    done = tools.invoke("coloured")
    failed = tools.invoke("refused")
    views = [card(done), card(failed)]
    done.wait(10), failed.wait(10)
    pages = {
        "card": views[0].static_html(),
        "failure card": views[1].static_html(),
        "call": done._repr_mimebundle_()["text/html"],
        "failed call": failed._repr_mimebundle_()["text/html"],
        "envelope": done.envelope._repr_mimebundle_()["text/html"],
        "failure envelope": failed.envelope._repr_mimebundle_()["text/html"],
    }
    for name, page in pages.items():
        assert "\x1b" not in page and "\x07" not in page, name
    assert "green result ␇ rings" in pages["card"]
    assert "green result ␇ rings" in pages["envelope"]
    assert "no such room" in pages["failure envelope"] and "title" not in pages["failure envelope"]
