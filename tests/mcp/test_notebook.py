"""Notebook 06 in a real kernel: a foreign MCP server's tools shown as a registry browser and its
calls as cards (server-filesystem from ``.node/`` here, where Node is installed).

The run read here is the test run's one execution of notebook 06 (the ``executed`` fixture), the
one ``tests/notebooks/test_notebooks.py`` also reads."""

from __future__ import annotations

import re

import nbformat
import pytest

from tests.mcp.support import node_tool
from tests.notebooks.support import NOTEBOOKS, WIDGET_VIEW, Runs, classes_in, html_outputs

NOTEBOOK = next(path for path in NOTEBOOKS if path.name.startswith("06-"))


@pytest.fixture
def notebook_06(executed: Runs) -> nbformat.NotebookNode:
    # This machine has Node (the session's run, wherever it was asked for first, took that
    # branch of the notebook): a missing install fails here, saying how to install it.
    node_tool("mcp-server-filesystem")
    return executed(NOTEBOOK.name)


def section(
    notebook: nbformat.NotebookNode, heading: str = "nobody here wrote"
) -> list[nbformat.NotebookNode]:
    """The cells from the one that says ``heading`` to the history section."""
    cells = notebook.cells
    start = next(i for i, cell in enumerate(cells) if heading in cell.source)
    end = next(i for i, cell in enumerate(cells) if cell.source.startswith("## The history"))
    return cells[start:end]


def text_of(cells: list[nbformat.NotebookNode]) -> str:
    return "".join(
        out.get("text", "") for cell in cells if cell.cell_type == "code" for out in cell.outputs
    )


@pytest.mark.kernel
def test_notebook_06_shows_a_foreign_servers_tools_as_cards(notebook_06):
    cells = section(notebook_06)
    outputs = html_outputs(nbformat.from_dict({"cells": cells}))
    live = [classes_in(out["data"]["text/html"]) for out in outputs if WIDGET_VIEW in out["data"]]
    assert any("wb-registry" in classes for classes in live)
    # A card that ended with nothing to click is saved as its HTML alone, not as a live view.
    shown = [classes_in(out["data"]["text/html"]) for out in outputs]
    assert sum("wb-card" in classes for classes in shown) >= 3  # read, long read, write
    printed = text_of(cells)
    assert "mcp-server-filesystem" in printed  # the real server, not the stand-in
    assert "'alpha\\nbeta\\n'" in printed  # the receipt is the file's text
    assert re.search(r"full text \(\d+ chars\): \S+text\.txt", printed)
    assert "awaiting_approval always_ask" in printed and "written: False" in printed
    saved = " ".join(out["data"]["text/html"] for out in html_outputs(notebook_06))
    assert "read_text_file" in saved and "write_file" in saved


@pytest.mark.kernel
def test_notebook_06_shows_what_server_everything_offers(notebook_06):
    cells = notebook_06.cells
    start = next(
        i for i, cell in enumerate(cells) if "Everything else a server offers" in cell.source
    )
    end = next(i for i, cell in enumerate(cells) if cell.source.startswith("## The history"))
    printed = text_of(cells[start:end])
    assert "7 resources, 2 templates" in printed and "'args-prompt'" in printed
    # The resource read is a call: its summary names the URI (its card shows the text).
    assert "demo://resource/static/document/architecture.md: 1 contents" in printed
    assert "Oslo" in printed  # the prompt's message, with its argument
    assert "roots: ['file://" in printed and "URI: file://" in printed
    assert re.search(r"log: \{'level': '\w+', 'logger': .*level message", printed)
    assert "the server asks: Resource trigger-sampling-request context: tides" in printed
    assert "written in the notebook" in printed
    assert "completions: ['Sales', 'Support']" in printed
    assert "updated: demo://resource/static/" in printed
    shown = " ".join(out["data"]["text/html"] for out in html_outputs(notebook_06))
    assert "<h1>Everything Server" in shown  # the read's view, its markdown drawn
    assert "value='5' max='5'" in shown and "5/5 (100%)" in shown  # the long operation's bar


@pytest.mark.kernel
def test_the_markdown_resource_is_drawn_as_markdown_not_as_a_json_string(notebook_06):
    (cell,) = [cell for cell in notebook_06.cells if "architecture.md" in cell.source]
    drawn = "".join(
        out["data"]["text/html"] for out in cell.outputs if "text/html" in out.get("data", {})
    )
    assert "wb-markdown" in drawn and "<h1>" in drawn, drawn[:500]
    assert "\\n" not in drawn
