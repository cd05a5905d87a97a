"""A notebook run headlessly (nbclient) and exported by nbconvert shows each card as it ended,
not as it was when first displayed: the card republishes its static HTML when its call ends."""

from __future__ import annotations

import re

import nbformat
import pytest
from nbclient import NotebookClient
from nbconvert import HTMLExporter

pytestmark = pytest.mark.kernel

CELLS = [
    "import workbench as wb\n"
    "from workbench.widgets import card\n"
    "tools = wb.Registry(history=':memory:', artifacts='artifacts')\n"
    "wb.builtins.register(tools, root='.')",
    "call = tools.invoke('shell_exec', {'command': 'echo headless; sleep 0.5'})\ncard(call)",
    "envelope = await call\nenvelope.status",
    "@tools.tool\n"
    "def fetch(url: str) -> dict:\n"
    '    "Fetch a page."\n'
    "    return wb.failure('not_found', 'no page at that address', field='url',\n"
    "                      expected='an http(s) URL', recovery_hint='check the spelling')\n"
    "bad = tools.invoke('fetch', {'url': 'htp://x'})\nbad",
    "tree = tools.invoke('file_read', {'path': '.'})\ntree",
    "tree.wait(10)\nwb.widgets.card(tree).result_widget.open_entry('src').wait(10)",
    "import time\nbad.wait(10)\ntime.sleep(0.5)",
]


def test_an_executed_and_exported_notebook_shows_the_final_card(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("print('hi')\n")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    client = NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
        # as JupyterLab saves by default: outputs, no widget state
        store_widget_state=False,
    )
    client.execute()
    (output,) = notebook.cells[1].outputs
    assert output.output_type == "display_data"
    html = output.data["text/html"]
    assert "wb-state-succeeded'" in html and "wb-state-queued'" not in html
    assert "headless" in html and "receipt" in html
    # Ended with nothing to click: saved as HTML alone, no widget view to miss its model.
    assert "application/vnd.jupyter.widget-view+json" not in output.data
    # A listing whose entries open on a click stays a live widget, its HTML beside it.
    (listing,) = notebook.cells[4].outputs
    assert "application/vnd.jupyter.widget-view+json" in listing.data

    exported, _ = HTMLExporter().from_notebook_node(notebook)
    text = re.sub(r"['\"]", "'", exported)  # nbconvert rewrites attribute quotes
    assert re.search(r"wb-state-succeeded'>succeeded<", text) and "headless" in text
    # The failure card's details, not the receipt in a <pre>: kind, message, field, expected
    # and the hint, each in its own element.
    failure = text[text.index("class='wb-failure'") :]
    assert "wb-kind'>not_found<" in failure
    assert "class='wb-message'>no page at that address<" in failure
    assert "<dt>field</dt><dd><code>url</code></dd>" in failure
    assert "<dt>expected</dt><dd><code>an http(s) URL</code></dd>" in failure
    assert "<dt>recovery hint</dt><dd><code>check the spelling</code></dd>" in failure
    # The listing tree as nested lists.
    tree = text[text.index("class='wb-tree'") :]
    # Its entries opened on a click: the saved tree says that needs the kernel.
    assert re.match(
        r"class='wb-tree' title='Opening an entry: Needs the kernel[^']*'><ul><li class='wb-tree-",
        tree,
    )
    assert "<code>src/</code><ul><li class='wb-tree-file' title='src/main.py'>" in tree


def test_a_call_shown_as_a_cells_value_is_saved_as_it_ended(tmp_path):
    """`call` as the last line of a cell (no explicit ``card(call)``) is saved as its final card,
    not as the queued card it was when the cell ended."""
    cells = [
        CELLS[0],
        "call = tools.invoke('shell_exec', {'command': 'echo shown; sleep 0.5'})\ncall",
        "envelope = await call",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute()
    (output,) = notebook.cells[1].outputs
    html = output.data["text/html"]
    assert "wb-state-succeeded'" in html and "wb-state-queued'" not in html
    assert "shown" in html and "application/vnd.jupyter.widget-view+json" not in output.data


def test_a_call_that_ends_between_two_cells_is_saved_as_it_ended(tmp_path):
    """A fast call ends after its cell finished and before the next one started: the headless
    runner ignores replies to the finished cell, so the card is republished as the next starts."""
    cells = [
        "import workbench as wb\n"
        "tools = wb.Registry(history=':memory:')\n"
        "@tools.tool\n"
        "def add(a: int, b: int) -> int:\n"
        "    '''Add two numbers.'''\n"
        "    return a + b",
        "call = tools.invoke('add', {'a': 1, 'b': '2'})\ncall",
        "done = call.done",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute()
    (output,) = notebook.cells[1].outputs
    html = output.data["text/html"]
    assert "wb-state-succeeded'" in html and "wb-state-queued'" not in html
