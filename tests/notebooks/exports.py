"""Reading an exported notebook as a person offline would: the text a browser shows without
running any script, and the workbench views a notebook's outputs hold."""

from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import nbformat

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_MANAGER = "@jupyter-widgets/html-manager"
VIEW_ROOT = re.compile(r"^\s*<\w+[^>]*class=['\"](wb-[^'\"]*)['\"]")
STATIC_VIEW = re.compile(
    r"class=['\"](wb-(?:card|registry|run|history|compaction|inspector)\b[^'\"]*wb-static[^'\"]*)['\"]"
)
HIDDEN = {"script", "style", "template", "head", "title"}


class _Visible(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hidden = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in HIDDEN:
            self.hidden += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in HIDDEN and self.hidden:
            self.hidden -= 1

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


def visible_text(html: str) -> str:
    """The text ``html`` shows with no script run, whitespace collapsed to single spaces."""
    parser = _Visible()
    parser.feed(html)
    parser.close()
    return " ".join(" ".join(parser.parts).split())


def _html(data: dict[str, Any]) -> str:
    html = data.get("text/html", "")
    return "".join(html) if isinstance(html, list) else str(html)


def view_outputs(notebook: Any) -> list[tuple[str, str]]:
    """Every workbench view among ``notebook``'s outputs: its root CSS classes and its static
    HTML (the ``text/html`` workbench puts beside each widget view)."""
    found = []
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            html = _html(output.get("data", {}))
            match = VIEW_ROOT.match(html.split("</style>")[-1])
            if match:
                found.append((match[1], html))
    return found


def static_views_in(html: str) -> list[str]:
    """The root classes of the workbench views drawn as static HTML in an exported page."""
    body = re.sub(r"<(script|style)\b.*?</\1>", "", html, flags=re.S | re.I)
    return re.findall(STATIC_VIEW, body)


def widget_free(html: str) -> list[str]:
    """What in an exported page would need a widget manager: empty when every output shows
    as static HTML, offline, with nothing fetched from a CDN."""
    problems = []
    if WIDGET_VIEW in html:
        problems.append("an output is exported as a widget view")
    if WIDGET_STATE in html:
        problems.append("widget state is embedded")
    if WIDGET_MANAGER in html or "unpkg.com" in html:
        problems.append("the page loads the widget manager from a CDN")
    return problems


def export_html(notebook: nbformat.NotebookNode, workdir: Path) -> str:
    """``notebook`` exported the common way, ``jupyter nbconvert --to html``, with its defaults."""
    source = workdir / "exported.ipynb"
    nbformat.write(notebook, source)
    subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", str(source)],
        check=True,
        capture_output=True,
    )
    return source.with_suffix(".html").read_text(encoding="utf-8")


def assert_every_view_reads_offline(notebook: nbformat.NotebookNode, html: str) -> None:
    """Every workbench view of ``notebook`` shows its text in ``html`` with no script run, and
    nothing in the page needs a widget manager."""
    assert widget_free(html) == []
    shown = visible_text(html)
    views = view_outputs(notebook)
    assert views, "the notebook shows workbench views"
    blank = [classes for classes, view in views if visible_text(view) not in shown]
    assert blank == [], f"{len(blank)} of {len(views)} views show nothing offline"
