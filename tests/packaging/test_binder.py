"""The Binder files install workbench into a fresh environment, the way repo2docker uses them.

repo2docker (what a hosted Binder runs) makes an environment with the Python named in
``binder/runtime.txt``, installs ``binder/requirements.txt`` with pip, then runs
``binder/postBuild`` from the repository root. The run's one fresh environment (``support.py``)
does that in the virtual environment the wheel was installed into, with the Python of
``runtime.txt``: the requirements, the wheel's ``lab`` extra (what postBuild's ``-e '.[lab]'``
brings and `make lab` installs), then postBuild itself from a copy of the repository's tracked
files. Here: the requirements are met by versions the wheel's own metadata allows, workbench
imports from the copy, ``pip check`` finds nothing, JupyterLab answers with the widget
extensions, and a notebook run there shows what the suite's own run of it shows.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import nbformat
import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from tests.notebooks.support import Runs, classes_in, html_outputs, outputs_of
from tests.packaging.support import (
    BINDER,
    BINDER_NOTEBOOK,
    ROOT,
    FreshEnvironment,
    runtime_version,
    wheel,
)


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
    assert "pip install --quiet --no-compile -e '.[$*]'" in makefile
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


# The environment is built before the first test that asks for it: its time counts there.
FRESH = pytest.mark.timeout(1500)


def lab_requirements(metadata: str) -> dict[str, Requirement]:
    """The wheel's requirements with its ``lab`` extra, following the extras it names of
    itself (``tool-workbench[mcp,...]``), by distribution name."""
    found: dict[str, Requirement] = {}
    declared = [
        Requirement(line.split(":", 1)[1])
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist:")
    ]
    extras, wanted = {"lab"}, [""]
    while wanted:
        extra = wanted.pop()
        for requirement in declared:
            if requirement.marker and not requirement.marker.evaluate({"extra": extra}):
                continue
            if requirement.name == "tool-workbench":
                wanted += sorted(requirement.extras - extras)
                extras |= requirement.extras
            else:
                found[requirement.name.lower()] = requirement
        if extra == "":
            wanted.append("lab")
    return found


@FRESH
def test_the_requirements_are_met_by_what_the_wheels_lab_extra_allows(
    fresh_environment: FreshEnvironment,
):
    with zipfile.ZipFile(wheel(fresh_environment)) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        allowed = lab_requirements(archive.read(name).decode())
    listed = fresh_environment.run(
        [fresh_environment.bin("python"), "-m", "pip", "list", "--format", "json"]
    )
    installed = {row["name"].lower(): row["version"] for row in json.loads(listed)}
    lines = (BINDER / "requirements.txt").read_text().splitlines()
    wanted = [Requirement(line) for line in lines if line.strip() and not line.startswith("#")]
    assert wanted
    for requirement in wanted:
        key = requirement.name.lower()
        assert key in allowed, f"{requirement} is not something the lab extra brings"
        version = installed[key]
        assert requirement.specifier.contains(version), (requirement, version)
        assert allowed[key].specifier.contains(version), (allowed[key], version)


@FRESH
def test_post_build_installs_workbench_from_the_repository(fresh_environment: FreshEnvironment):
    assert fresh_environment.repo is not None
    imported = Path(fresh_environment.binder_import.strip().splitlines()[-1])
    assert imported.is_relative_to(fresh_environment.repo), "workbench is installed from the copy"
    assert "No broken requirements" in fresh_environment.pip_check
    version = fresh_environment.lab_version.strip().splitlines()[-1]
    assert int(version.split(".")[0]) >= 4, version
    extensions = fresh_environment.extensions
    assert "@jupyter-widgets/jupyterlab-manager" in extensions and "anywidget" in extensions
    settings = fresh_environment.venv / "share" / "jupyter" / "lab" / "settings"
    assert (settings / "overrides.json").read_text() == (BINDER / "overrides.json").read_text()
    # The Help menu's entries are the lab's user settings, in the home JupyterLab reads them from.
    help_menu = "@jupyterlab/mainmenu-extension/plugin.jupyterlab-settings"
    user_settings = Path(fresh_environment.env["HOME"]) / ".jupyter" / "lab" / "user-settings"
    assert (user_settings / help_menu).read_text() == (
        BINDER / "user-settings" / help_menu
    ).read_text()


def shown(notebook: nbformat.NotebookNode) -> tuple[list[str], set[str], int]:
    """What a run of a notebook shows, whatever its ids and timings: its errors, the classes
    of its views' roots and how many plots."""
    outputs = outputs_of(notebook)
    errors = [f"{out.ename}: {out.evalue}" for out in outputs if out.output_type == "error"]
    roots = {
        sorted(classes_in(out["data"]["text/html"].split("</style>")[-1]) or [""])[0]
        for out in html_outputs(notebook)
    }
    images = sum("image/png" in out.get("data", {}) for out in outputs)
    return errors, roots, images


@FRESH
def test_a_notebook_runs_in_the_binder_environment_as_in_the_suite(
    fresh_environment: FreshEnvironment, executed: Runs
):
    assert fresh_environment.notebook is not None
    there = nbformat.read(fresh_environment.notebook, as_version=4)
    errors, roots, images = shown(there)
    assert errors == []
    assert (roots, images) == shown(executed(BINDER_NOTEBOOK))[1:]
    assert images >= 1 and any(root.startswith("wb-") for root in roots)
