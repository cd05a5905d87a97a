"""The package people install by name: `make dist` builds it, and the wheel works on its own.

The distribution is ``tool-workbench`` (another project owns ``workbench`` on the package index);
the import stays ``workbench``. The run's one fresh environment (``support.py``) builds the sdist
and the wheel as ``make dist`` does and checks them with twine, installs the wheel alone into a
new virtual environment (pip reaching the package index for the dependencies, nothing from this
checkout on the path), imports it and runs ``python -m workbench check`` on a small registry;
with the ``lab`` extra added it starts ``jupyter server`` there, where the wheel's own config
file enables workbench's save extension: a notebook saved through the server is read back.
"""

from __future__ import annotations

import re
import tomllib

import pytest

from tests.packaging.support import ROOT, FreshEnvironment

DISTRIBUTION = "tool-workbench"
EXTRAS = {"lab", "mcp", "openai", "anthropic", "gemini", "study", "transcripts"}


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


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


# The environment is built before the first test that asks for it: its time counts there.
FRESH = pytest.mark.timeout(1500)


@FRESH
def test_make_dist_builds_an_sdist_and_a_wheel_twine_passes(fresh_environment: FreshEnvironment):
    version = __import__("workbench").__version__
    assert [path.name for path in fresh_environment.dist] == [
        f"tool_workbench-{version}-py3-none-any.whl",
        f"tool_workbench-{version}.tar.gz",
    ]
    assert "PASSED" in fresh_environment.twine


@FRESH
def test_the_wheel_alone_installs_imports_and_checks(fresh_environment: FreshEnvironment):
    shown = fresh_environment.core_import.split()
    assert shown[0] == __import__("workbench").__version__
    assert str(fresh_environment.venv) in shown[1]
    assert "add" in fresh_environment.core_check


@FRESH
def test_the_wheels_config_enables_the_save_extension(fresh_environment: FreshEnvironment):
    served = fresh_environment.served
    assert served is not None
    assert served.config["ServerApp"]["jpserver_extensions"]
    assert "workbench: notebooks save workbench views as their static HTML" in served.log
    data = served.saved["cells"][0]["outputs"][0]["data"]
    assert "application/vnd.jupyter.widget-view+json" not in data
    html = data["text/html"]
    assert "add succeeded" in ("".join(html) if isinstance(html, list) else html)
    assert "widgets" not in served.saved["metadata"]
