"""The public names of DESIGN.md are exported from ``workbench``, and ``__all__`` is curated."""

from __future__ import annotations

import subprocess
import sys

import workbench as wb

DESIGN_NAMES = {
    "Envelope",
    "ErrorKind",
    "ToolError",
    "failure",
    "failure_message",
    "from_exception",
    "is_error",
    "is_success",
    "listing",
    "success",
    "success_payload",
    "truncate_for_model",
    "run",
    "Run",
    "compare_runs",
}


def test_design_names_are_exported():
    missing = sorted(name for name in DESIGN_NAMES if not hasattr(wb, name))
    assert missing == []
    assert set(wb.__all__) >= DESIGN_NAMES


def test_all_is_sorted_and_unique():
    assert wb.__all__ == sorted(set(wb.__all__))


def test_every_name_in_all_exists():
    assert [name for name in wb.__all__ if not hasattr(wb, name)] == []


def test_private_modules_are_not_the_public_surface():
    public = [name for name in wb.__all__ if name.startswith("_")]
    assert public == []
    for name in wb.__all__:
        module = getattr(getattr(wb, name), "__module__", "workbench")
        assert module.startswith("workbench"), name


def test_the_core_imports_nothing_from_jupyter():
    code = (
        "import sys, workbench\n"
        "jupyter = {'ipywidgets', 'IPython', 'traitlets', 'anywidget', 'ipykernel'}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in jupyter))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_model_runs_are_public_and_import_no_provider_sdk():
    assert wb.run is wb.models.run and wb.Run is wb.models.Run
    assert wb.compare_runs is wb.models.compare_runs
    code = (
        "import sys, workbench\n"
        "sdks = {'openai', 'anthropic', 'google'}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in sdks))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
