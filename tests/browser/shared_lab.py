"""The run's one JupyterLab, shared by every process of the run that runs browser tests.

The first process to ask starts it (holding a lock file, so no second one starts) and writes
where it is to ``browser/lab.json`` in the run's folder (``tests/conftest.py``, ``run_folder``);
the others read that record. It outlives the process that started it and is stopped, by its
pid, by the process that handed out the tests once every test has run
(``pytest_sessionfinish``), or by the next run if a run was killed before it could stop it.
Its root (each test's own folder and a copy of ``docs/``, which the Help menu's workbench
entries open), its home and its log (``jupyterlab.log``) are in ``browser/`` there.
"""

from __future__ import annotations

import fcntl
import json
import shutil
from pathlib import Path

from tests.conftest import pid_alive, run_folder


def record_in(run: Path) -> Path:
    return run / "browser" / "lab.json"


def shared_lab():  # -> harness.LabServer; harness imports Playwright, which only workers need
    """The run's JupyterLab, started now if no process of the run has started it yet."""
    from tests.browser.harness import REPO, start_lab

    here = run_folder() / "browser"
    here.mkdir(parents=True, exist_ok=True)
    with (here / ".lab.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        record_file = record_in(run_folder())
        if record_file.exists():
            return recorded_server(json.loads(record_file.read_text()))
        root = here / "root"
        shutil.copytree(REPO / "docs", root / "docs", ignore=shutil.ignore_patterns("*.ipynb"))
        server = start_lab(here / "home", root, here / "jupyterlab.log", die_with_parent=False)
        record = {
            "url": server.url,
            "root": str(server.root),
            "home": str(server.home),
            "log": str(server.log),
            "pid": server.pid,
        }
        record_file.write_text(json.dumps(record))
        return server


def recorded_server(record: dict):  # -> harness.LabServer
    """The server a record describes, as a process that did not start it sees it."""
    from tests.browser.harness import LabServer

    return LabServer(
        record["url"],
        Path(record["root"]),
        Path(record["home"]),
        Path(record["log"]),
        record["pid"],
    )


def recorded_server_alive(record: dict) -> bool:
    """True while the process ``record`` names runs and is that JupyterLab (its command line
    names the recorded root): a pid reused by another process is never signalled."""
    if not pid_alive(record["pid"]):
        return False
    try:
        cmdline = Path(f"/proc/{record['pid']}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False  # it ended between the two looks
    return "jupyterlab" in cmdline and f"--ServerApp.root_dir={record['root']}" in cmdline


def stop_shared_lab(run: Path) -> None:
    """Stop the JupyterLab the run of folder ``run`` started, if it started one and it still
    runs, and leave in the folder only its log of it."""
    record_file = record_in(run)
    if not record_file.exists():
        return
    record = json.loads(record_file.read_text())
    if recorded_server_alive(record):
        from tests.browser.harness import stop_lab

        stop_lab(recorded_server(record))
    record_file.unlink()
    for folder in ("root", "home"):
        if (record_file.parent / folder).exists():
            shutil.rmtree(record_file.parent / folder)
