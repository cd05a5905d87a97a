"""Each notebook of ``notebooks/`` executed once per test run in a real Jupyter kernel, by
nbclient with its default settings, kept in the run's output folder, and what tests read of it.

The executed copy of ``NAME.ipynb`` is ``notebooks/NAME.ipynb`` in the run's folder
(``tests/conftest.py``, ``run_folder``: ``test-output/last-run/`` once the run ended), with its
outputs and widget state as nbclient leaves them, run in ``notebooks/NAME/`` there (its kernel's
cwd, with whatever the notebook wrote); ``NAME.widgets.json`` beside it holds the CSS classes
of the widgets its kernel created. Every pytest process of a run shares these files: the first
one to ask for a notebook runs it while it holds that notebook's lock file, the others wait on
the lock and read what it wrote. No run reads another's.

The tests that judge outputs read these copies: ``tests/notebooks/test_notebooks.py``, the docs
build, the offline exports of ``test_headless_export.py``, notebook 06's checks in ``tests/mcp``,
the charts of notebook 08 (its figures recorded by a probe, below) and the Binder check's
comparison.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import traceback
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.util import ensure_async

from tests.conftest import run_folder
from tests.notebooks.charts_probe import probe_source

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
CELL_TIMEOUT_S = 180


def run_output() -> Path:
    """Where this run's notebooks are executed."""
    return run_folder() / "notebooks"


def probe_record(name: str) -> Path:
    """Where the probe run beside notebook ``name`` writes what it recorded."""
    return run_output() / f"{Path(name).stem}.probe.json"


# Code run silently in a notebook's kernel before its first cell, recording what no output
# shows (a probe writes only to its record, never beside the notebook). Notebook 08's figures:
# the geometry of each bar and legend as drawn.
PROBES = {"08-a-study.ipynb": probe_source}


def record_created_widgets(client: NotebookClient, classes: set[str]) -> None:
    """Collect into ``classes`` the CSS classes of every widget the kernel opens or restyles,
    whichever request its messages answer (workbench's views answer none: nbclient itself
    keeps no state for them)."""
    channel = client.kc.iopub_channel
    receive = channel.get_msg

    async def get_msg(*args, **kwargs):
        msg = await ensure_async(receive(*args, **kwargs))
        if msg["msg_type"] in ("comm_open", "comm_msg"):
            state = msg["content"].get("data", {}).get("state", {})
            classes.update(state.get("_dom_classes", ()))
        return msg

    channel.get_msg = get_msg


async def run_probe(client: NotebookClient, source: str) -> None:
    """Run ``source`` in the kernel quietly (no execution count, no output in the notebook)."""
    msg_id = client.kc.execute(source, silent=True, store_history=False)
    reply = await client.async_wait_for_reply(msg_id)
    assert reply is not None and reply["content"]["status"] == "ok", reply


def run_notebook(path: Path, workdir: Path) -> tuple[nbformat.NotebookNode, set[str], str]:
    """Execute a copy of ``path`` in ``workdir`` so nothing is written beside the original,
    with nbclient's default settings (widget state stored, as nbconvert and papermill do): the
    notebook as far as it ran, the classes of the widgets its kernel created, and the traceback
    of what stopped it ("" when it ran to its end)."""
    copy = workdir / path.name
    shutil.copy(path, copy)
    notebook = nbformat.read(copy, as_version=4)
    created: set[str] = set()
    probe = PROBES.get(path.name)

    async def started(**_: object) -> None:
        record_created_widgets(client, created)
        if probe is not None:
            await run_probe(client, probe(probe_record(path.name)))

    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(workdir)}},
        on_notebook_start=started,
    )
    # The kernel's temporary folder is the run's own, so what it leaves there once it has
    # shut down can be counted (``left_behind``).
    scratch = scratch_of(workdir)
    scratch.mkdir(exist_ok=True)
    try:
        client.execute(env={**os.environ, "TMPDIR": str(scratch)})
    except Exception:
        return notebook, created, traceback.format_exc()
    return notebook, created, ""


def scratch_of(workdir: Path) -> Path:
    """The temporary folder a notebook's kernel ran with."""
    return workdir.parent / f".{workdir.name}.tmp"


def left_behind(workdir: Path) -> list[str]:
    """What the notebook's kernel, and the processes it started, left in its temporary folder
    once the kernel shut down."""
    scratch = scratch_of(workdir)
    return sorted(path.name for path in scratch.iterdir()) if scratch.exists() else []


def execute_once(name: str) -> None:
    """Make ``run_output()/NAME`` unless this run already has it (in any process). A run that
    fails keeps the notebook as far as it ran and the failure in ``NAME.failed.txt``, so the
    notebook is not run again for each test that reads it."""
    path = next(p for p in NOTEBOOKS if p.name == name)
    run_output().mkdir(parents=True, exist_ok=True)
    with (run_output() / f".{path.stem}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if (run_output() / name).exists():
            return
        workdir = run_output() / path.stem
        for folder in (workdir, scratch_of(workdir)):
            if folder.exists():  # left by a process of this run that was killed mid-run
                shutil.rmtree(folder)
        workdir.mkdir()
        notebook, created, failure = run_notebook(path, workdir)
        if failure:
            (run_output() / f"{path.stem}.failed.txt").write_text(failure)
        (run_output() / f"{path.stem}.widgets.json").write_text(json.dumps(sorted(created)))
        partial = run_output() / f".{name}.partial"
        nbformat.write(notebook, partial)
        partial.replace(run_output() / name)


class Runs:
    """``runs(name)``: the notebook ``name`` as this run executed it (at the first asking, in
    any process); ``runs.workdir(name)`` is the folder it ran in; ``runs.created(name)`` the
    CSS classes of the widgets its kernel created."""

    def __init__(self) -> None:
        self._runs: dict[str, nbformat.NotebookNode] = {}

    def __call__(self, name: str) -> nbformat.NotebookNode:
        if name not in self._runs:
            execute_once(name)
            failed = run_output() / f"{Path(name).stem}.failed.txt"
            assert not failed.exists(), f"{name} did not run to its end:\n{failed.read_text()}"
            self._runs[name] = nbformat.read(run_output() / name, as_version=4)
        return self._runs[name]

    def workdir(self, name: str) -> Path:
        self(name)
        return run_output() / Path(name).stem

    def left_behind(self, name: str) -> list[str]:
        """What the notebook's run left in its kernel's temporary folder."""
        return left_behind(self.workdir(name))

    def created(self, name: str) -> set[str]:
        self(name)
        return set(json.loads((run_output() / f"{Path(name).stem}.widgets.json").read_text()))


def outputs_of(notebook: nbformat.NotebookNode) -> list[dict]:
    return [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.outputs]


def html_outputs(notebook: nbformat.NotebookNode) -> list[dict]:
    return [out for out in outputs_of(notebook) if "text/html" in out.get("data", {})]


def classes_in(html: str) -> set[str]:
    """The CSS classes used on elements (not those a stylesheet merely mentions)."""
    return {
        name
        for match in re.finditer(r"class=['\"]([^'\"]*)['\"]", html)
        for name in match[1].split()
    }
