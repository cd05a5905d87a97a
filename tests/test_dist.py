"""The package people install by name: `make dist` builds it, and the wheel works on its own.

The distribution is ``tool-workbench`` (another project owns ``workbench`` on the package index);
the import stays ``workbench``. The slow test builds the sdist and the wheel as ``make dist``
does, checks them with twine, installs the wheel into a new virtual environment (pip reaching
the package index for the dependencies, nothing from this checkout on the path), imports it,
runs ``python -m workbench check`` on a small registry, and starts ``jupyter server`` there: the
wheel's own config file enables workbench's save extension, which is proved by saving a notebook
through the server and reading back the file it wrote.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import tomllib
import urllib.request
import venv
from pathlib import Path

import pytest

from tests.browser.harness import free_port

ROOT = Path(__file__).resolve().parents[1]
DISTRIBUTION = "tool-workbench"
EXTRAS = {"lab", "mcp", "openai", "anthropic", "gemini", "study", "transcripts"}


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def run(command: list[str], **kwargs) -> str:
    result = subprocess.run(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs
    )
    assert result.returncode == 0, f"{command} failed:\n{result.stdout[-4000:]}"
    return result.stdout


def test_the_distribution_has_its_own_name_and_one_version():
    meta = project()
    assert meta["name"] == DISTRIBUTION
    assert "version" not in meta and "version" in meta["dynamic"]
    source = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert source["dynamic"]["version"] == {"attr": "workbench.__version__"}
    import workbench

    assert re.fullmatch(r"\d+\.\d+\.\d+", workbench.__version__)
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## {workbench.__version__}" in changelog


def test_the_extras_stay_as_they_are():
    assert set(project()["optional-dependencies"]) >= EXTRAS


def test_every_install_hint_names_the_distribution():
    """An extra's hint in the package says `pip install 'tool-workbench[...]'`, never the name
    another project owns."""
    stale = []
    for path in (ROOT / "workbench").rglob("*.py"):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"(?<![\w-])workbench\[", line):
                stale.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not stale


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


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_make_dist_builds_a_wheel_that_installs_checks_and_serves(tmp_path):
    dist = tmp_path / "dist"
    run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)],
        cwd=ROOT,
    )
    built = sorted(p.name for p in dist.iterdir())
    version = __import__("workbench").__version__
    assert built == [
        f"tool_workbench-{version}-py3-none-any.whl",
        f"tool_workbench-{version}.tar.gz",
    ]
    assert "PASSED" in run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, dist.iterdir())]
    )

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTHON", "JUPYTER", "VIRTUAL_ENV"))
    }
    clean["HOME"] = str(tmp_path / "home")
    wheel = next(dist.glob("*.whl"))
    run([str(python), "-m", "pip", "install", "--quiet", str(wheel), "jupyter_server"], env=clean)

    work = tmp_path / "work"
    work.mkdir()
    (work / "small_tools.py").write_text(REGISTRY)
    shown = run(
        [
            str(python),
            "-c",
            "import workbench, sys; print(workbench.__version__, workbench.__file__)",
        ],
        cwd=work,
        env=clean,
    )
    assert shown.split()[0] == version and str(env_dir) in shown.split()[1]
    checked = run(
        [str(python), "-m", "workbench", "check", "small_tools:registry"], cwd=work, env=clean
    )
    assert "add" in checked

    config = env_dir / "etc" / "jupyter" / "jupyter_server_config.d" / "workbench.json"
    assert json.loads(config.read_text())["ServerApp"]["jpserver_extensions"]
    port = free_port()
    log = tmp_path / "server.log"
    with log.open("wb") as sink:
        server = subprocess.Popen(
            [
                str(env_dir / "bin" / "jupyter"),
                "server",
                "--no-browser",
                "--ip=127.0.0.1",
                f"--port={port}",
                "--ServerApp.port_retries=0",
                "--allow-root",
                "--IdentityProvider.token=wb-test",
                f"--ServerApp.root_dir={work}",
            ],
            cwd=work,
            env=clean,
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
                with urllib.request.urlopen(
                    urllib.request.Request(f"{base}/api/status", headers=headers), timeout=2
                ):
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
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)
        server.wait(30)
    assert "workbench: notebooks save workbench views as their static HTML" in log.read_text()
    saved = json.loads((work / "saved.ipynb").read_text())
    data = saved["cells"][0]["outputs"][0]["data"]
    assert "application/vnd.jupyter.widget-view+json" not in data
    html = data["text/html"]
    assert "add succeeded" in ("".join(html) if isinstance(html, list) else html)
    assert "widgets" not in saved["metadata"]
