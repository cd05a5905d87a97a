"""One fresh environment per test run, made from the wheel ``make dist`` builds, walked through
once the way people get workbench (the steps below, in order) and recorded for the packaging
tests to judge.

1. The sdist and the wheel are built as ``make dist`` builds them, and checked with twine.
2. A new virtual environment gets the wheel alone (``pip install tool-workbench``: its own
   dependencies from the package index, nothing of this checkout on the path); workbench
   imports from there and ``python -m workbench check`` runs on a small registry.
3. What repo2docker installs first, ``binder/requirements.txt``, then the wheel's ``lab`` extra
   (``pip install 'tool-workbench[lab]'``, what ``make lab`` and Binder's postBuild install):
   ``jupyter server`` started there enables workbench's save extension from the wheel's own
   config file, shown by saving a notebook through the server and reading the file it wrote.
4. ``binder/postBuild``, run from a copy of the repository's tracked files as repo2docker runs
   it, installs workbench from that copy into the same environment (everything it needs is
   there by now, so it installs no dependency again); workbench imports from the copy, ``pip
   check`` finds nothing, JupyterLab answers with the widget extensions, and one notebook runs.

Every pip command of the run shares the pip cache ``make`` filled (``PIP_CACHE``), but for
postBuild's own ``--no-cache-dir``, and none compiles the bytecode of everything it installs.
A step that fails stops the walk with the step's output.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from tests.browser.harness import OUTPUT, free_port

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"
# The notebook run in the Binder environment: plots, cards, an inspector, a listing and the
# history view, with nothing it needs beyond the `lab` extra.
BINDER_NOTEBOOK = "03-receipts.ipynb"

REGISTRY = '''
import workbench as wb

registry = wb.Registry(history=":memory:")


@registry.tool(read_only=True)
def add(a: int, b: int = 1) -> int:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b
'''

SAVED = {
    "cells": [
        {
            "cell_type": "code",
            "execution_count": 1,
            "id": "card",
            "metadata": {},
            "source": "call",
            "outputs": [
                {
                    "output_type": "display_data",
                    "metadata": {},
                    "data": {
                        "application/vnd.jupyter.widget-view+json": {
                            "model_id": "m1",
                            "version_major": 2,
                            "version_minor": 0,
                        },
                        "text/html": "<div class='wb-card wb-static'>add succeeded</div>",
                        "text/plain": "Call(add)",
                    },
                }
            ],
        }
    ],
    "metadata": {
        "widgets": {
            "application/vnd.jupyter.widget-state+json": {
                "version_major": 2,
                "version_minor": 0,
                "state": {
                    "m1": {
                        "model_name": "VBoxModel",
                        "model_module": "@jupyter-widgets/controls",
                        "model_module_version": "2.0.0",
                        "state": {"_dom_classes": ["wb-card"]},
                    }
                },
            }
        }
    },
    "nbformat": 4,
    "nbformat_minor": 5,
}
"""A notebook as JupyterLab sends it to be saved: a card's widget view beside its HTML."""


def run(command: list[str], **kwargs) -> str:
    """Run ``command``; its output (stdout and stderr together), or a failure showing it."""
    result = subprocess.run(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs
    )
    assert result.returncode == 0, f"{command} failed:\n{result.stdout[-4000:]}"
    return result.stdout


def runtime_version() -> str:
    """The Python version ``binder/runtime.txt`` asks for, e.g. ``"3.11"``."""
    text = (BINDER / "runtime.txt").read_text().strip()
    match = re.fullmatch(r"python-(\d+\.\d+)", text)
    assert match, f"runtime.txt should read python-X.Y, not {text!r}"
    return match[1]


def interpreter(version: str) -> str:
    """A Python of ``version`` on this machine: ``pythonX.Y`` on PATH, or this one."""
    found = shutil.which(f"python{version}")
    if found:
        return found
    assert f"{sys.version_info.major}.{sys.version_info.minor}" == version, (
        f"no python{version} on this machine to build the fresh environment with"
    )
    return sys.executable


def copy_tracked_files(destination: Path) -> None:
    """The repository as a fresh clone has it: its tracked files, as they are now."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


@dataclass
class Served:
    """What ``jupyter server`` in the environment did with a notebook saved through it."""

    config: dict
    log: str
    saved: dict


@dataclass
class FreshEnvironment:
    """The walk's record. ``env`` is the environment its commands ran with; ``dist`` the built
    files and ``twine`` their check; ``core_import`` and ``core_check`` what the wheel alone
    printed; ``served`` the save extension's proof; ``binder_import``, ``pip_check``,
    ``lab_version`` and ``extensions`` what the environment said after postBuild;
    ``notebook`` the path of the notebook it ran."""

    root: Path
    venv: Path
    env: dict[str, str]
    dist: list[Path] = field(default_factory=list)
    twine: str = ""
    core_import: str = ""
    core_check: str = ""
    served: Served | None = None
    repo: Path | None = None
    binder_import: str = ""
    pip_check: str = ""
    lab_version: str = ""
    extensions: str = ""
    notebook: Path | None = None

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)

    def run(self, command: list[str], cwd: Path | None = None) -> str:
        return run(command, cwd=cwd or self.root, env=self.env)

    def pip_install(self, *arguments: str) -> str:
        return self.run([self.bin("python"), "-m", "pip", "install", "--quiet", *arguments])


PIP_CACHE = Path(os.environ.get("PIP_CACHE_DIR") or Path.home() / ".cache" / "pip")
"""The pip cache of the person running the tests, which ``make`` filled installing the same
packages: the fresh environment downloads nothing it already fetched (the cache holds what came
from the package index, never an install of this checkout), and pip still resolves every
requirement against the index as a new user's pip does."""


def clean_environment(root: Path, venv: Path) -> dict[str, str]:
    """This process's environment with nothing pointing at its Python or Jupyter files: a home
    of its own, the venv first on PATH, and the person's pip cache."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "JUPYTER", "VIRTUAL_ENV", "PIP_"))
    }
    home = root / "home"
    home.mkdir()
    env.update(
        HOME=str(home),
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(venv),
        JUPYTER_CONFIG_DIR=str(home / "jupyter_config_dir"),
        JUPYTER_DATA_DIR=str(home / "jupyter_data_dir"),
        PIP_CACHE_DIR=str(PIP_CACHE),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        # No bytecode compiled for every file installed (minutes of CPU for JupyterLab's
        # dependencies); what runs there compiles what it imports, as any interpreter does.
        PIP_NO_COMPILE="1",
    )
    return env


def build_dist(fresh: FreshEnvironment) -> None:
    """Step 1: ``python -m build`` and ``twine check --strict``, as ``make dist`` does."""
    out = fresh.root / "dist"
    run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], cwd=ROOT, env=fresh.env)
    fresh.dist = sorted(out.iterdir())
    fresh.twine = run([sys.executable, "-m", "twine", "check", "--strict", *map(str, fresh.dist)])


def wheel(fresh: FreshEnvironment) -> Path:
    return next(path for path in fresh.dist if path.suffix == ".whl")


def install_the_wheel_alone(fresh: FreshEnvironment) -> None:
    """Step 2: the wheel and its own dependencies; what it shows and checks there."""
    fresh.pip_install(str(wheel(fresh)))
    work = fresh.root / "work"
    work.mkdir()
    (work / "small_tools.py").write_text(REGISTRY)
    python = fresh.bin("python")
    shows = "import workbench; print(workbench.__version__, workbench.__file__)"
    fresh.core_import = fresh.run([python, "-c", shows], cwd=work)
    fresh.core_check = fresh.run([python, "-m", "workbench", "check", "small_tools:registry"], work)


def install_the_lab_extra(fresh: FreshEnvironment) -> None:
    """Step 3: repo2docker's requirements, then the wheel's ``lab`` extra; the server's save
    extension, enabled by the wheel's config file."""
    fresh.pip_install("-r", str(BINDER / "requirements.txt"))
    fresh.pip_install(f"{wheel(fresh)}[lab]")
    fresh.served = serve_and_save(fresh)


def serve_and_save(fresh: FreshEnvironment) -> Served:
    """Start ``jupyter server`` in the environment on a free port, save ``SAVED`` through its
    contents API, stop it (it is ours: its own session, signalled by pid) and read back."""
    config = fresh.venv / "etc" / "jupyter" / "jupyter_server_config.d" / "workbench.json"
    work = fresh.root / "served"
    work.mkdir()
    port = free_port()
    log = fresh.root / "server.log"
    command = [fresh.bin("jupyter"), "server", "--no-browser", "--ip=127.0.0.1"]
    command += [f"--port={port}", "--ServerApp.port_retries=0", "--allow-root"]
    command += ["--IdentityProvider.token=wb-test", f"--ServerApp.root_dir={work}"]
    with log.open("wb") as sink:
        server = subprocess.Popen(
            command,
            cwd=work,
            env=fresh.env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        base = f"http://127.0.0.1:{port}"
        headers = {"Authorization": "token wb-test", "Content-Type": "application/json"}
        deadline = time.monotonic() + 60
        while True:
            try:
                status = urllib.request.Request(f"{base}/api/status", headers=headers)
                with urllib.request.urlopen(status, timeout=2):
                    break
            except OSError:
                assert server.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.3)
        body = json.dumps({"type": "notebook", "format": "json", "content": SAVED}).encode()
        request = urllib.request.Request(
            f"{base}/api/contents/saved.ipynb", data=body, headers=headers, method="PUT"
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status in (200, 201)
    finally:
        with contextlib.suppress(ProcessLookupError):  # it ended already: nothing to stop
            os.killpg(server.pid, signal.SIGTERM)
        server.wait(30)
    return Served(
        config=json.loads(config.read_text()),
        log=log.read_text(),
        saved=json.loads((work / "saved.ipynb").read_text()),
    )


def run_post_build(fresh: FreshEnvironment) -> None:
    """Step 4: ``binder/postBuild`` from a copy of the tracked files, then what the environment
    says of itself and one notebook run there, in a copy of ``notebooks/``."""
    repo = fresh.repo = fresh.root / "repo"
    copy_tracked_files(repo)
    fresh.run([str(repo / "binder" / "postBuild")], cwd=repo)
    python = fresh.bin("python")
    shows = "import workbench, workbench.widgets, matplotlib; print(workbench.__file__)"
    fresh.binder_import = fresh.run([python, "-c", shows])
    fresh.pip_check = fresh.run([python, "-m", "pip", "check"])
    fresh.lab_version = fresh.run([fresh.bin("jupyter"), "lab", "--version"])
    fresh.extensions = fresh.run([fresh.bin("jupyter"), "labextension", "list"])
    notebooks = fresh.root / "notebooks"
    shutil.copytree(repo / "notebooks", notebooks)
    command = [fresh.bin("jupyter"), "nbconvert", "--to", "notebook", "--execute"]
    command += ["--ExecutePreprocessor.timeout=180", "--output", f"ran-{BINDER_NOTEBOOK}"]
    fresh.run([*command, BINDER_NOTEBOOK], cwd=notebooks)
    fresh.notebook = notebooks / f"ran-{BINDER_NOTEBOOK}"


TIMELINE = OUTPUT / "fresh-environment-timeline.md"
"""Where the walk's minutes went, step by step, for a person to read."""


def walk(root: Path) -> FreshEnvironment:
    """Every step, in order, in ``root``; the record."""
    venv = root / "venv"
    fresh = FreshEnvironment(root=root, venv=venv, env=clean_environment(root, venv))
    began = time.monotonic()
    timeline = ["| s | step |", "|---:|---|"]

    def mark(step: str) -> None:
        timeline.append(f"| {time.monotonic() - began:.0f} | {step} |")
        TIMELINE.parent.mkdir(parents=True, exist_ok=True)
        TIMELINE.write_text("# The fresh environment's timeline\n\n" + "\n".join(timeline) + "\n")

    build_dist(fresh)
    mark("sdist and wheel built and checked")
    run([interpreter(runtime_version()), "-m", "venv", str(venv)], env=fresh.env)
    mark("virtual environment made")
    install_the_wheel_alone(fresh)
    mark("the wheel installed alone, imported and checked")
    install_the_lab_extra(fresh)
    mark("binder/requirements.txt and the lab extra installed, a notebook saved through the server")
    run_post_build(fresh)
    mark("postBuild run, the environment asked, one notebook run")
    return fresh
