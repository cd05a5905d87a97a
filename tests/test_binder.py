"""The Binder files install workbench into a fresh environment, the way repo2docker uses them.

repo2docker (what a hosted Binder runs) makes an environment with the Python named in
``binder/runtime.txt``, installs ``binder/requirements.txt`` with pip, then runs
``binder/postBuild`` from the repository root. The slow test does exactly that in a new virtual
environment, from a copy of the repository's tracked files, with pip reaching the machine's
package index (the postBuild's ``--no-cache-dir`` means nothing comes from pip's cache), and then
checks that workbench imports from the copy, JupyterLab answers with the widget extensions, and
every notebook runs top to bottom there (the environment holds exactly the `lab` extra, which
is also what `make lab` installs). The notebooks run a few at a time, each in a copy of the
notebooks' folder of its own.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).parent.parent
BINDER = ROOT / "binder"


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
    if f"{sys.version_info.major}.{sys.version_info.minor}" == version:
        return sys.executable
    pytest.fail(f"no python{version} on this machine to build the Binder environment with")


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


def start(
    command: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    """``command`` started, its stdout and stderr going to one pipe (read by :func:`output`)."""
    return subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def output(process: subprocess.Popen[str]) -> str:
    """The output of ``process`` once it has ended, or a failure showing it."""
    text, _ = process.communicate()
    assert process.returncode == 0, f"{process.args} failed:\n{text[-4000:]}"
    return text


def run(command: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Run ``command``; its output (stdout and stderr together), or a failure showing it."""
    return output(start(command, cwd=cwd, env=env))


def test_runtime_python_satisfies_the_package():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert runtime_version() in SpecifierSet(project["requires-python"])


def test_post_build_is_an_executable_script_installing_the_package():
    post_build = BINDER / "postBuild"
    assert os.access(post_build, os.X_OK)
    assert post_build.read_text().startswith("#!")
    assert "pip install" in post_build.read_text() and "-e '.[lab]'" in post_build.read_text()


def test_make_lab_and_binder_install_the_same_extra_and_it_brings_mcp():
    """`make lab` and Binder's postBuild both install the `lab` extra, which brings everything
    the notebooks import (notebook 06 needs the MCP SDK)."""
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^lab: \$\(VENV\)/\.installed-lab\b", makefile, re.M)
    assert "pip install --quiet -e '.[$*]'" in makefile
    assert "-e '.[lab]'" in (BINDER / "postBuild").read_text()
    lab = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {Requirement(r).name for r in lab["lab"]}
    assert "tool-workbench" in names and {"mcp"} <= {Requirement(r).name for r in lab["mcp"]}
    itself = next(r for r in lab["lab"] if r.startswith("tool-workbench"))
    assert "mcp" in Requirement(itself).extras


@pytest.mark.parametrize(
    ("statement", "extra"),
    [("import workbench as wb; wb.mcp", "mcp"), ("import workbench.mcp", "mcp")],
)
def test_a_missing_optional_dependency_names_the_extra_to_install(statement, extra):
    # `None` in sys.modules makes `import mcp` fail exactly as it does where mcp is missing.
    code = f"import sys; sys.modules['mcp'] = None\n{statement}"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError")
    assert f"pip install 'tool-workbench[{extra}]'" in last


def test_the_readme_opens_binder_without_a_placeholder_address():
    readme = (ROOT / "README.md").read_text()
    guide = (ROOT / "docs" / "how-to" / "binder.md").read_text()
    # This repository has no public address: no badge may point at an owner that is not ours.
    for text in (readme, guide):
        assert not re.search(r"mybinder\.org/v2/gh/[A-Za-z0-9_.-]+/", text)
    assert "(docs/how-to/binder.md)" in readme  # the README sends a reader to the guide
    assert "mybinder.org/v2/gh/<owner>/<repository>/<branch>" in guide
    assert "repo2docker" in guide


def test_requirements_are_what_the_lab_extra_needs():
    """Binder's requirements and the package's own lab extra and dependencies agree."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {
        Requirement(r).name
        for r in project["dependencies"] + project["optional-dependencies"]["lab"]
    }
    lines = (BINDER / "requirements.txt").read_text().splitlines()
    wanted = [Requirement(line) for line in lines if line.strip() and not line.startswith("#")]
    assert wanted and {r.name for r in wanted} <= declared


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_binder_files_install_workbench_into_a_fresh_environment(tmp_path):
    repo = tmp_path / "repo"
    copy_tracked_files(repo)
    venv = tmp_path / "venv"
    run([interpreter(runtime_version()), "-m", "venv", str(venv)])
    bin_dir = venv / "bin"
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP"}
    }
    home = tmp_path / "home"
    home.mkdir()
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(venv), HOME=str(home)
    )
    env.update(
        {name: str(home / name.lower()) for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR")}
    )

    # What repo2docker does: the requirements first, then postBuild from the repository root.
    pip = [str(bin_dir / "python"), "-m", "pip", "install", "--no-cache-dir", "--quiet"]
    run([*pip, "-r", str(repo / "binder" / "requirements.txt")], cwd=repo, env=env)
    run([str(repo / "binder" / "postBuild")], cwd=repo, env=env)

    python = str(bin_dir / "python")
    imported = run(
        [
            python,
            "-c",
            "import workbench, workbench.widgets, matplotlib; print(workbench.__file__)",
        ],
        cwd=tmp_path,
        env=env,
    )
    assert Path(imported.strip().splitlines()[-1]).is_relative_to(repo), (
        "workbench is installed from the repository"
    )

    # Every notebook runs top to bottom in that environment: what `make lab` gives a person. The
    # notebooks run while the environment itself is checked; neither needs the other.
    runs = [str(repo / "notebooks"), str(tmp_path / "run"), str(NOTEBOOKS_AT_ONCE)]
    notebooks = start([python, "-c", RUN_EVERY_NOTEBOOK, *runs], cwd=tmp_path, env=env)
    try:
        run([python, "-m", "pip", "check"], env=env)
        lab = run([str(bin_dir / "jupyter"), "lab", "--version"], env=env)
        version = lab.strip().splitlines()[-1]
        assert int(version.split(".")[0]) >= 4, version
        extensions = run([str(bin_dir / "jupyter"), "labextension", "list"], env=env)
        assert "@jupyter-widgets/jupyterlab-manager" in extensions and "anywidget" in extensions
    finally:
        # Each notebook's cells have a time limit, so the run ends; its kernels end with it.
        executed = output(notebooks)
    names = sorted(path.name for path in (repo / "notebooks").glob("*.ipynb"))
    assert executed.strip().splitlines()[-len(names) :] == [f"ran {name}" for name in names]


# Notebooks run side by side in the fresh environment: their kernels mostly wait (streams,
# sleeps, subprocesses, servers), so a few together take little longer than the slowest alone.
NOTEBOOKS_AT_ONCE = 4

# Run in the fresh environment's Python (nbclient comes with JupyterLab, through nbconvert) with
# the notebooks' folder, a folder to run them in and how many run at once. Each notebook runs in
# a copy of the notebooks' folder of its own, as a person's checkout has it, so two running at
# once share no file. Each one's time is printed, then "ran NAME" for each, in name order, once
# all have run; a failure prints each failing notebook's error and exits 1.
RUN_EVERY_NOTEBOOK = """
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient

source, runs, at_once = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
# Unix sockets, not TCP ports: other kernels on the machine cannot take them first. They live
# in a short directory of their own: a socket's path holds at most 107 bytes.
sockets = Path(tempfile.mkdtemp(prefix="wbk-"))


async def run_one(name, slots):
    async with slots:
        started = time.monotonic()
        folder = runs / name.removesuffix(".ipynb")
        shutil.copytree(source, folder)
        notebook = nbformat.read(folder / name, as_version=4)
        ip = str(sockets / name[:2])
        manager = AsyncKernelManager(kernel_name="python3", transport="ipc", ip=ip)
        resources = {"metadata": {"path": str(folder)}}
        client = NotebookClient(notebook, km=manager, timeout=180, resources=resources)
        # cleanup_kc: the kernel is shut down and its channels closed however the run ends.
        await client.async_execute(cleanup_kc=True)
        print(f"{name} took {time.monotonic() - started:.1f} s", flush=True)


async def run_all():
    slots = asyncio.Semaphore(at_once)
    names = sorted(path.name for path in source.glob("*.ipynb"))
    ended = await asyncio.gather(*(run_one(name, slots) for name in names), return_exceptions=True)
    failed = [(name, error) for name, error in zip(names, ended) if error is not None]
    for name, error in failed:
        print(f"{name} failed: {type(error).__name__}: {error}", flush=True)
    if failed:
        sys.exit(1)
    for name in names:
        print("ran", name, flush=True)


try:
    asyncio.run(run_all())
finally:
    shutil.rmtree(sockets)
"""
