"""Terminal colour codes: stripped from receipts (a model reads text), kept in the artifacts,
named in the inspector, drawn as colours on cards."""

from __future__ import annotations

from workbench.output._ansi import has_ansi, strip_ansi
from workbench.widgets._panes import panes_of

COLOURED = "\x1b[32mPASSED\x1b[0m tests/test_x.py \x1b]0;title\x07done"


def test_strip_ansi_removes_every_escape_and_keeps_the_text():
    assert strip_ansi(COLOURED) == "PASSED tests/test_x.py done"
    assert strip_ansi("plain") == "plain" and not has_ansi("plain") and has_ansi(COLOURED)


def test_a_commands_receipt_has_no_escapes_and_its_artifact_keeps_them(tools, tmp_path):
    import workbench as wb

    wb.builtins.register(tools, root=tmp_path)
    command = "printf '\\033[31mred\\033[0m line\\n'; seq 1 20000"
    call = tools.invoke("shell_exec", {"command": command})
    envelope = call.wait(30)
    assert "red line" in call.receipt and "\x1b" not in call.receipt
    assert "\x1b[31m" in call.output("stdout")  # the complete output keeps the colours
    titles = [pane.title for pane in panes_of(envelope, call.receipt)]
    assert "colour codes stripped" in titles[-1]


def test_the_inspector_says_nothing_when_there_were_no_escapes(tools):
    import workbench as wb

    envelope = wb.success("t", "plain text")
    assert [pane.title for pane in panes_of(envelope)][-1] == "Receipt"
