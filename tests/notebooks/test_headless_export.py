"""The other common ways of running a notebook headless export every card readable offline.

What a headless run saves of the real notebooks is judged on the run's one nbclient execution of
each (``test_notebooks.py``, the ``executed`` fixture). What differs here is the runner, so each
runner runs once, on one small notebook made for it that draws every kind of view workbench has
(a registry browser, finished, failed and streaming cards, a listing that still opens entries,
an inspector, a history view, a compaction view and a model run's card): papermill with its
defaults (it drives nbclient, which stores widget state) then ``jupyter nbconvert --to html``,
and ``jupyter nbconvert --execute --to html`` in one step. Each exported page must show every
view as its static HTML, with no widget view, no widget state and no widget manager fetched
from a CDN.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tests.notebooks.exports import (
    assert_every_view_reads_offline,
    export_html,
    static_views_in,
    view_outputs,
    widget_free,
)

STATIC_CARD = re.compile(r"class=['\"]wb-card wb-static['\"]")
# The root class of every kind of view the notebook draws, as its static HTML shows it.
VIEWS = {"wb-card", "wb-registry", "wb-run", "wb-history", "wb-compaction", "wb-inspector"}

# A scripted model's two replies (Chat Completions): ask for one call, then answer.
REPLIES = """
def reply(number, message, finish):
    return {"json": {"id": f"chatcmpl-headless-{number}", "object": "chat.completion",
                     "created": 1767225600, "model": "scripted-model",
                     "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                     "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}}

asking = {"role": "assistant", "content": None, "tool_calls": [{
    "id": "call_add", "type": "function", "function": {"name": "add", "arguments": '{"a": 2}'}}]}
REPLIES = [reply(1, asking, "tool_calls"),
           reply(2, {"role": "assistant", "content": "2 + 1 is 3."}, "stop")]
"""

CELLS = [
    "import workbench as wb\n"
    "from workbench.models.local_server import ScriptedServer\n"
    "from workbench.widgets import CompactionView, EnvelopeInspector, HistoryView\n"
    "tools = wb.Registry(history=':memory:', artifacts='artifacts')\n"
    "wb.builtins.register(tools, root='.')\n"
    "@tools.tool(read_only=True)\n"
    "def add(a: int, b: int = 1) -> int:\n"
    '    """Add two numbers.\n\n    Args:\n        a: The first.\n        b: The second.\n    """\n'
    "    return a + b",
    "tools",
    "done = tools.invoke('add', {'a': '2'})\ndone.wait()\ndone",
    "refused = tools.invoke('add', {'a': 'two'})\nrefused.wait()\nrefused",
    "tree = tools.invoke('file_read', {'path': '.'})\ntree.wait()\ntree",
    # Shown while it runs; it ends after its cell, and its card is republished as it ended.
    "streaming = tools.invoke('shell_exec', {'command': 'echo one; sleep 0.5; echo two'})\n"
    "streaming",
    "streaming.wait()\nEnvelopeInspector(done)",
    "HistoryView(tools.history)",
    "CompactionView(tools.history, budget=400)",
    REPLIES + "server = ScriptedServer({'openai_chat': REPLIES}).start()\n"
    "run = wb.run('openai:scripted-model', tools, 'Add 2 and 1.',"
    " base_url=server.openai_base_url)\n"
    "run.wait()\nrun",
    "server.stop()",
]

NOTEBOOK = "headless.ipynb"
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


def write_notebook(folder: Path) -> Path:
    """The small notebook, as ``folder/headless.ipynb``."""
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(source) for source in CELLS],
        metadata={"kernelspec": KERNELSPEC, "language_info": {"name": "python"}},
    )
    path = folder / NOTEBOOK
    nbformat.write(notebook, path)
    return path


def cards_in(html: str) -> int:
    """How many cards ``html`` draws as static HTML (scripts and stylesheets left out)."""
    return len(STATIC_CARD.findall(re.sub(r"<(script|style)\b.*?</\1>", "", html, flags=re.S)))


def kinds_in(html: str) -> set[str]:
    """The root classes of the views an exported page draws as static HTML."""
    return {classes.split()[0] for classes in static_views_in(html)}


@pytest.fixture(scope="module")
def papermilled(tmp_path_factory: pytest.TempPathFactory) -> nbformat.NotebookNode:
    """The small notebook run once by papermill with its default settings."""
    import papermill

    folder = tmp_path_factory.mktemp("papermill")
    output = folder / "run-headless.ipynb"
    papermill.execute_notebook(
        str(write_notebook(folder)),
        str(output),
        cwd=str(folder),
        kernel_name="python3",
        progress_bar=False,
    )
    return nbformat.read(output, as_version=4)


@pytest.mark.kernel
def test_papermill_then_nbconvert_shows_every_card_offline(papermilled, tmp_path):
    html = export_html(papermilled, tmp_path)
    assert_every_view_reads_offline(papermilled, html)
    assert kinds_in(html) == VIEWS


@pytest.mark.kernel
def test_nbconvert_execute_to_html_shows_every_card_offline(papermilled, tmp_path):
    """One step, as the command line is usually typed; the run's cards are counted against
    papermill's run of the same notebook (ids and timings differ between runs, counts do not)."""
    write_notebook(tmp_path)
    subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--execute", "--to", "html", NOTEBOOK],
        cwd=tmp_path,
        check=True,
        capture_output=True,
    )
    html = (tmp_path / "headless.html").read_text(encoding="utf-8")
    assert widget_free(html) == []
    expected = sum(cards_in(view) for _, view in view_outputs(papermilled))
    assert expected >= 4
    assert cards_in(html) == expected
    assert kinds_in(html) == VIEWS
