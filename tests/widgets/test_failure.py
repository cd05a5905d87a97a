"""The failure card, from real failures: kind badge, message, field and expected, retryable or
not, recovery hint, who stopped the call; Edit and retry starts a new call below."""

from __future__ import annotations

import asyncio

import workbench as wb
from tests.conftest import wait_until
from tests.widgets.support import XSS, assert_escaped
from workbench.widgets import CallCard, FailureCard, card


def test_fields_of_a_preflight_failure(tools):
    @tools.tool
    def scale(factor: int) -> int:
        return factor * 2

    call = tools.invoke("scale", {"factor": "lots"})
    call.wait(5)
    view = card(call).result_widget
    assert isinstance(view, FailureCard)
    assert "wb-failure" in view._dom_classes
    html = view.body.value
    error = call.envelope.error
    assert "wb-kind'>invalid_args<" in html
    assert error.field == "factor"
    assert "<dt>field</dt><dd><code>factor</code></dd>" in html
    assert f"<dt>expected</dt><dd><code>{wb.widgets._html.esc(error.expected)}</code>" in html
    assert ">retryable<" in html
    assert wb.widgets._html.esc(error.message) in html


def test_not_retryable_recovery_hint_and_killed_by(tools):
    @tools.tool(timeout=None)
    async def forever(ctx: wb.ToolContext) -> None:
        ctx.emit("working\n")
        while True:
            await asyncio.sleep(0.01)

    call = tools.invoke("forever")
    view = card(call)
    assert wait_until(lambda: call.output_size() > 0)
    call.terminate()
    call.wait(5)
    html = view.result_widget.body.value
    assert "wb-kind'>terminated<" in html and ">not retryable<" in html
    assert "<dt>recovery hint</dt>" in html
    assert "<dt>killed_by</dt><dd><code>&quot;user&quot;</code></dd>" in html
    # The output appears once: in the card's pane, not again as "stdout before it stopped".
    assert "stdout before it stopped" not in html
    static = view.static_html().split("class='wb-receipt'")[0]  # the receipt is the model's
    assert static.count("working") == 1 and "stdout before it stopped" not in static
    # A failure marked not retryable offers no Edit and retry.
    assert not view.result_widget.can_retry
    assert view.result_widget.edit_button not in view.result_widget.children
    # The failure card alone (no card around it) keeps what the call printed.
    alone = FailureCard(call.envelope)
    assert "stdout before it stopped" in alone.body.value and "working" in alone.body.value


def test_edit_and_retry_invokes_the_edited_arguments_below(tools):
    @tools.tool
    def scale(factor: int) -> int:
        return factor * 2

    call = tools.invoke("scale", {"factor": "lots"})
    call.wait(5)
    view = card(call).result_widget
    assert view.form.layout.display == "none"
    assert view.editor.value == '{\n  "factor": "lots"\n}'
    view.edit_button.click()
    assert view.form.layout.display is None
    view.editor.value = '{"factor": 21}'
    view.retry_button.click()
    (retried,) = view.retries
    assert retried.tool_name == "scale" and retried.raw_args == {"factor": 21}
    assert retried.wait(5).result == 42
    (follow,) = view.follow_ups.children
    assert isinstance(follow, CallCard) and follow.call is retried
    # shown as a widget in the column: whole, its result and receipt drawn
    _result_view, receipt = follow.result.children
    assert "42" in receipt.value
    assert "succeeded" in view.static_html()


def test_retry_with_text_that_is_not_json_shows_the_problem(tools):
    @tools.tool
    def scale(factor: int) -> int:
        return factor

    call = tools.invoke("scale", {})
    call.wait(5)
    view = FailureCard(call.envelope, call=call)
    view.editor.value = "{factor: 2"
    assert view.retry() is None
    assert "not JSON" in view.problem.value
    assert view.retries == []


def test_a_string_of_arguments_is_reopened_as_sent(tools):
    @tools.tool
    def scale(factor: int) -> int:
        return factor

    call = tools.invoke("scale", '{"factor": "x"}')
    call.wait(5)
    assert FailureCard(call.envelope, call=call).editor.value == '{"factor": "x"}'


def test_no_retry_for_an_unknown_tool_or_without_the_call(tools):
    call = tools.invoke("no_such_tool", {})
    call.wait(5)
    view = FailureCard(call.envelope, call=call)
    assert not view.can_retry and view.edit_button not in view.children
    assert view.retry() is None
    bare = FailureCard(call.envelope)
    assert not bare.can_retry


def test_the_message_and_output_are_escaped(tools):
    @tools.tool
    def evil(ctx: wb.ToolContext) -> None:
        ctx.emit(XSS)
        raise wb.ToolFailure("execution_error", XSS, field=XSS)

    call = tools.invoke("evil")
    call.wait(5)
    view = FailureCard(call.envelope, call=call)
    assert_escaped(view.static_html())
    assert_escaped(view._repr_mimebundle_()["text/html"])


def test_the_saved_form_draws_edit_and_retry_disabled_saying_it_needs_the_kernel(tools):
    @tools.tool
    def scale(factor: int) -> int:
        return factor * 2

    call = tools.invoke("scale", {"factor": "lots"})
    call.wait(5)
    html = card(call).result_widget.static_html()
    assert (
        "<button class='wb-needs-kernel' disabled title='Needs the kernel that made this view: "
        "run the cell again to use it.'>Edit and retry</button>"
    ) in html
    tools.unregister("scale")  # no retry offered: nothing drawn
    assert "wb-needs-kernel" not in FailureCard(call.envelope, call=call).static_html()
