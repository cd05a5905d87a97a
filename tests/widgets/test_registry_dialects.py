"""The registry browser's dialect verdicts: one column per provider, for the tool shown and, in
the static form, for every tool."""

from __future__ import annotations

import re
from typing import Any

import workbench as wb
from workbench.widgets.registry_browser import RegistryBrowser


def cells(html: str, css_class: str) -> list[list[str]]:
    table = re.search(rf"<table class='[^']*{css_class}[^']*'>(.*?)</table>", html, re.S)
    assert table is not None, html
    rows = re.findall(r"<tr>(.*?)</tr>", table.group(1), re.S)
    return [re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S) for row in rows]


def registry() -> wb.Registry:
    tools = wb.Registry(history=":memory:")

    @tools.tool
    def tag(labels: dict[str, Any]) -> None:
        """Tag <b>something</b>.

        Args:
            labels: Labels.
        """

    @tools.tool
    def ping(host: str) -> str:
        """Ping a host.

        Args:
            host: A name.
        """
        return host

    return tools


def test_the_export_checks_tab_leads_with_the_tools_verdict_per_provider():
    browser = RegistryBrowser(registry())
    browser.picker.value = "tag"
    rows = cells(browser.panels["Checks"].value, "wb-verdicts")
    assert rows == [
        ["tool", "openai", "openai-strict", "anthropic", "gemini", "mcp"],
        ["tag", "changed", "refused", "changed", "changed", "changed"],
    ]
    browser.picker.value = "ping"
    rows = cells(browser.panels["Checks"].value, "wb-verdicts")
    assert rows[1] == ["ping", "ok", "ok", "ok", "ok", "ok"]


def test_the_static_form_has_every_tools_verdicts():
    tools = registry()
    html = RegistryBrowser(tools).to_html()
    rows = cells(html, "wb-verdicts")
    assert [row[0] for row in rows] == ["tool", "tag", "ping"]
    assert rows[1:] == tools.dialect_verdicts().reset_index().astype(str).values.tolist()
