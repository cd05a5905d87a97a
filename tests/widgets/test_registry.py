"""The registry browser, kernel-free: badges, schema, exports, checks, resilience, the form."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Literal

import ipywidgets as widgets
import pytest

import workbench as wb
from workbench.widgets import RegistryBrowser
from workbench.widgets.registry_browser import badges

XSS = "<img src=x onerror=alert(1)>"


@pytest.fixture
def browser_tools(tools: wb.Registry) -> wb.Registry:
    @tools.tool(read_only=True, idempotent=True)
    async def search_files(
        pattern: str,
        limit: int = 10,
        ratio: float = 0.5,
        deep: bool = False,
        mode: Literal["glob", "regex"] = "glob",
        tags: list[str] | None = None,
        options: dict[str, int] | None = None,
    ) -> dict:
        """Find files matching a glob pattern.

        Args:
            pattern: Glob such as "*.py".
            limit: Most matches to return.
            ratio: A fraction.
            deep: Descend into directories.
            mode: How to read the pattern.
            tags: Labels to match.
            options: Extra knobs.
        """
        await asyncio.sleep(0.05)  # long enough for the browser to show the card first
        return {"pattern": pattern, "limit": limit, "deep": deep, "mode": mode, "tags": tags}

    @tools.tool(destructive=True, permission="always_ask", effects=("deletes files",))
    def remove(path: str) -> str:
        """Delete a file."""
        return path

    return tools


def test_every_tool_is_listed_with_its_metadata_badges(browser_tools):
    browser = RegistryBrowser(browser_tools)

    assert "wb-registry" in browser._dom_classes
    assert browser.picker.options == ("search_files", "remove")
    assert browser.picker.value == "search_files"
    overview = browser.overview.value
    assert "search_files" in overview and "remove" in overview
    assert "read-only" in overview and "destructive" in overview
    labels = [label for label, _ in badges(browser_tools.spec("remove"), "always_ask")]
    assert labels[:2] == ["destructive", "permission: always_ask"]
    assert "effect: deletes files" in labels
    assert ("read-only", "safe") in badges(browser_tools.spec("search_files"), "always_allow")

    browser_tools.set_permission("search_files", "always_deny")
    browser.reload()
    assert "permission: always_deny" in browser.header.value


def test_schema_exports_and_checks_are_the_registrys_own(browser_tools):
    browser = RegistryBrowser(browser_tools)
    browser.picker.value = "remove"

    titles = [browser.tabs.get_title(i) for i in range(len(browser.tabs.children))]
    assert titles == [
        "Invoke",
        "Schema",
        "OpenAI",
        "Anthropic",
        "MCP",
        "Resilience",
        "Checks",
        "Frameworks",
    ]
    schema = json.dumps(browser_tools.spec("remove").input_schema, indent=2)
    assert schema.replace('"', "&quot;") in browser.panels["Schema"].value
    for title, target in (("OpenAI", "openai"), ("Anthropic", "anthropic"), ("MCP", "mcp")):
        [exported] = [t for t in browser_tools.export(target) if "remove" in json.dumps(t)]
        assert json.dumps(exported, indent=2).replace('"', "&quot;") in browser.panels[title].value
    checks = browser_tools.check_exports()
    problems = checks[checks["tool"] == "remove"]["problem"]
    assert len(problems) > 0  # `path` has no description
    for problem in problems:
        assert problem.replace("'", "&#x27;") in browser.panels["Checks"].value

    @browser_tools.tool
    def ping(host: str) -> str:
        """Ping a host.

        Args:
            host: A name or an address.
        """
        return host

    browser.reload()
    browser.picker.value = "ping"
    assert "Every provider accepts this tool" in browser.panels["Checks"].value


def test_the_resilience_tab_shows_the_resilience_matrix(browser_tools):
    browser = RegistryBrowser(browser_tools)
    matrix = browser_tools.resilience("search_files")

    html = browser.panels["Resilience"].value
    assert f"{len(matrix)} cases sent through the preflight only" in html
    counts = matrix["outcome"].value_counts()
    assert f"{counts['refused']} refused" in html
    assert html.count("<tr>") == len(matrix) + 1
    for case in matrix["case"]:
        assert f"<td>{case}</td>" in html
    # The long-string case is clipped, not drawn whole.
    assert re.search(r"… \(100,\d{3} chars\)", html)


def test_the_form_has_one_input_per_schema_type(browser_tools):
    form = RegistryBrowser(browser_tools).form
    kinds = {field.name: (field.kind, type(field.input), field.required) for field in form.fields}

    assert kinds == {
        "pattern": ("text", widgets.Text, True),
        "limit": ("integer", widgets.IntText, False),
        "ratio": ("number", widgets.FloatText, False),
        "deep": ("boolean", widgets.Checkbox, False),
        "mode": ("enum", widgets.Dropdown, False),
        "tags": ("json", widgets.Textarea, False),
        "options": ("json", widgets.Textarea, False),
    }
    assert form.field("mode").input.options == (("glob", "glob"), ("regex", "regex"))
    assert form.field("limit").input.value == 10  # the default, shown but not sent
    assert form.field("pattern").toggle is None
    assert form.arguments() == {"pattern": ""}


def test_optional_fields_are_sent_once_edited_and_left_out_when_unticked(browser_tools):
    form = RegistryBrowser(browser_tools).form
    form.field("pattern").input.value = "*.py"
    form.field("limit").input.value = 3
    form.field("deep").input.value = True
    form.field("mode").input.value = "regex"
    form.field("tags").input.value = '["a", "b"]'
    form.field("options").input.value = "{not json"

    assert form.arguments() == {
        "pattern": "*.py",
        "limit": 3,
        "deep": True,
        "mode": "regex",
        "tags": ["a", "b"],
        "options": "{not json",  # sent as typed: the preflight decides
    }
    form.field("limit").toggle.value = False
    assert "limit" not in form.arguments()


def test_invoke_sends_the_form_and_shows_the_card_below(browser_tools):
    browser = RegistryBrowser(browser_tools)
    browser.form.field("pattern").input.value = "*.py"
    browser.form.field("tags").input.value = '["x"]'

    browser.invoke_button.click()

    [call] = browser.calls
    envelope = call.wait(10)
    assert envelope.ok and envelope.result["tags"] == ["x"]
    assert call.raw_args == {"pattern": "*.py", "tags": ["x"]}
    [output] = browser.output.outputs
    assert output["output_type"] == "display_data"
    assert "wb-card" in output["data"]["text/html"]
    assert call.id in browser.to_html() or call.short_id in browser.to_html()


def test_raw_json_mode_sends_malformed_arguments_as_typed(browser_tools):
    browser = RegistryBrowser(browser_tools)
    browser.form.field("pattern").input.value = "*.py"
    browser.mode.value = "raw"
    assert json.loads(browser.raw.value) == {"pattern": "*.py"}  # starts from the form
    assert browser.form_box.children == (browser.raw,)

    browser.raw.value = '{"pattern": *.py, "limit": "5"}'
    browser.invoke_button.click()

    [call] = browser.calls
    envelope = call.wait(10)
    assert call.raw_args == '{"pattern": *.py, "limit": "5"}'
    assert envelope.error.kind == wb.ErrorKind.INVALID_ARGS
    assert "not valid JSON" in envelope.error.message

    browser.raw.value = '{"pattern": "*.py", "limit": "5", "deep": "yes"}'
    coerced = browser.invoke().wait(10)
    assert coerced.ok and coerced.result["limit"] == 5 and coerced.result["deep"] is True
    browser.mode.value = "form"
    assert browser.form_box.children == (browser.form.widget,)


def test_tool_text_is_escaped_everywhere(tools):
    @tools.tool(effects=(XSS,))
    def risky(choice: Literal["<script>alert(1)</script>", "b"], note: str = "") -> str:
        """Do something <img src=x onerror=alert(1)>.

        Args:
            choice: Pick <b>one</b> <script>alert(3)</script>.
            note: A note.
        """
        return choice

    browser = RegistryBrowser(tools)
    browser.invoke_button.click()
    browser.calls[0].wait(10)
    html_values = [
        browser.overview.value,
        browser.header.value,
        browser.to_html(),
        *(panel.value for panel in browser.panels.values()),
        *(field.help.value for field in browser.form.fields if field.help is not None),
    ]
    for html in html_values:
        assert "<img" not in html and "<script>" not in html and "<b>one" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in browser.header.value
    help_text = browser.form.field("choice").help.value
    assert "Pick &lt;b&gt;one&lt;/b&gt; &lt;script&gt;alert(3)" in help_text
    # A dropdown's labels are text, not HTML, in the browser.
    label, value = browser.form.field("choice").input.options[0]
    assert label == value == "<script>alert(1)</script>"


def test_an_empty_registry_says_so(tools):
    browser = RegistryBrowser(tools)
    assert "No tools registered" in browser.overview.value
    assert browser.form.fields == []
    assert "No tools registered" in browser.to_html()


def test_the_mime_bundle_carries_the_static_html(browser_tools):
    data = RegistryBrowser(browser_tools)._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    html = data["text/html"]
    assert "class='wb-registry wb-static'" in html
    assert html.count("<details class='wb-tool'") == 2


def _until(condition, timeout: float = 5.0) -> bool:
    import time

    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)
    return condition()


def test_the_browser_follows_its_registry_and_says_what_was_unregistered(browser_tools):
    browser = RegistryBrowser(browser_tools)

    @browser_tools.tool
    def late(text: str) -> str:
        """Registered after the browser opened."""
        return text

    assert _until(lambda: "late" in browser.picker.options), browser.picker.options
    # What a closed MCP connection does to its tools: every one of them goes.
    for name in browser_tools.names():
        browser_tools.unregister(name)
    assert _until(lambda: browser.picker.options == ()), browser.picker.options
    overview = browser.overview.value
    assert "No tools registered." in overview
    assert "3 tools unregistered since this browser opened" in overview
    assert "search_files, remove, late" in overview
    assert browser.invoke_button.disabled
    assert "unregistered since this browser opened" in browser.to_html()
    browser.stop_following()


def test_the_frameworks_tab_shows_each_frameworks_tool_of_the_function_when_opened(
    browser_tools,
):
    schema = {"type": "object", "properties": {}}
    browser_tools.register(
        lambda arguments: "raw", name="raw", description="Raw.", input_schema=schema
    )
    browser = RegistryBrowser(browser_tools)
    browser.picker.value = "search_files"
    panel = browser.panels["Frameworks"]
    assert panel.value == ""  # made only when the tab is opened
    browser.tabs.selected_index = list(browser.tabs.titles).index("Frameworks")
    assert "LangChain" in panel.value and "MCP SDK" in panel.value
    assert "drops the description of `limit`" in panel.value
    browser.picker.value = "raw"  # a hand-written schema has no function to read
    assert "not declared from a Python function" in panel.value
