"""``python -m workbench check MODULE:REGISTRY`` run as a real subprocess on a good and a bad
registry: exit codes, the table, ``--json``, ``--targets``, ``--tool``, the allow-list file."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from workbench.__main__ import main

ROOT = Path(__file__).resolve().parents[2]

GOOD = '''
import workbench as wb

tools = wb.Registry(history=":memory:")


@tools.tool(read_only=True)
def lookup(key: str, exact: bool = True) -> str:
    """Look a key up.

    Args:
        key: The key.
        exact: Match exactly.
    """
    return key
'''

BAD = '''
from typing import Any

import workbench as wb

tools = wb.Registry(history=":memory:")


@tools.tool
def tag(labels: dict[str, Any]) -> None:
    """Tag something.

    Args:
        labels: Labels to set.
    """


def loose_body(args):
    return args


tools.register(
    loose_body,
    name="loose",
    description="Takes a number or a word.",
    input_schema={
        "type": "object",
        "properties": {"n": {"type": ["integer", "string"], "description": "A number."}},
        "required": ["n"],
        "additionalProperties": False,
    },
)


@tools.tool
def deploy(target: str) -> str:
    """Deploy.

    Args:
        target: Where to.
    """
    return target


@deploy.dry_run
def plan_deploy(target: str) -> str:
    raise RuntimeError("the planner touched the network")
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("project")
    (directory / "good_tools.py").write_text(textwrap.dedent(GOOD))
    (directory / "bad_tools.py").write_text(textwrap.dedent(BAD))
    return directory


def check(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(project)])}
    return subprocess.run(
        [sys.executable, "-m", "workbench", "check", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_good_registry_passes_with_a_table_and_exit_0(project):
    done = check(project, "good_tools:tools")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert (
        lines[0]
        == "workbench check: 1 tools; targets openai, openai-strict, anthropic, gemini, mcp"
    )
    assert lines[2].split() == ["tool", "openai", "openai-strict", "anthropic", "gemini", "mcp"]
    assert lines[3].split() == ["lookup", "ok", "changed", "ok", "ok", "ok"]
    assert re.search(r"^Resilience: \d+ cases over 1 tools, 0 unexpected$", done.stdout, re.M)
    assert "Dry runs: 1 planned, 0 failed" in lines
    assert lines[-1] == "OK: 0 errors, 1 warnings, 0 allowed (failing on errors)"


def test_a_bad_registry_fails_naming_the_refusal_the_case_and_the_dry_run(project):
    done = check(project, "bad_tools:tools")
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "ERROR    tag  export/openai-strict" in out
    assert "`labels` is a free-form mapping" in out
    assert "ERROR    loose  resilience/wrong_type:n" in out
    assert "case `wrong_type:n` was accepted, expected refused" in out
    assert "ERROR    deploy  dry-run" in out
    assert "the planner touched the network" in out
    assert out.splitlines()[-1].startswith("FAIL: 3 errors")


def test_json_report(project):
    done = check(project, "bad_tools:tools", "--json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["ok"] is False
    assert report["failures"] == 3
    assert report["verdicts"]["tag"]["openai-strict"] == "refused"
    assert report["verdicts"]["deploy"] == dict.fromkeys(report["targets"], "ok")
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    assert sorted((f["tool"], f["section"], f["target"]) for f in errors) == [
        ("deploy", "dry-run", "dry-run"),
        ("loose", "resilience", "wrong_type:n"),
        ("tag", "export", "openai-strict"),
    ]
    assert all(f["fix"] for f in report["findings"])


def test_targets_and_tool_narrow_the_check(project):
    done = check(project, "bad_tools:tools", "--targets", "gemini,mcp", "--tool", "tag", "--json")
    report = json.loads(done.stdout)
    assert done.returncode == 0, done.stdout
    assert report["targets"] == ["gemini", "mcp"]
    assert list(report["verdicts"]) == ["tag"]
    assert {f["target"] for f in report["findings"] if f["section"] == "export"} == {
        "gemini",
        "mcp",
    }


def test_an_allow_list_accepts_differences_and_flags_rules_that_match_nothing(project, tmp_path):
    allow = tmp_path / "allow.txt"
    allow.write_text(
        "# accepted differences\n"
        "tag openai-strict free-form   # labels are free by design\n"
        "loose wrong_type:*\n"
        "deploy dry-run\n"
    )
    done = check(project, "bad_tools:tools", "--allow", str(allow))
    assert done.returncode == 0, done.stdout
    assert "allowed  tag  export/openai-strict" in done.stdout
    assert done.stdout.splitlines()[-1].startswith("OK: 0 errors")
    allow.write_text(allow.read_text() + "* gemini recursive\n")
    done = check(project, "bad_tools:tools", "--allow", str(allow), "--json")
    report = json.loads(done.stdout)
    stale = [f for f in report["findings"] if f["section"] == "allow-list"]
    assert [f["problem"] for f in stale] == [
        "allow-list line 5 (* gemini recursive) matched nothing"
    ]
    assert done.returncode == 0
    strict = check(project, "bad_tools:tools", "--allow", str(allow), "--fail-on", "warning")
    assert strict.returncode == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bad_tools:tools", "--targets", "cohere"], "unknown target cohere"),
        (["bad_tools:tools", "--tool", "nope"], "no tool named nope"),
        (["missing_module:tools"], "cannot load missing_module:tools: No module named"),
        (["bad_tools:nothing"], "cannot load bad_tools:nothing: module 'bad_tools' has no"),
        (["bad_tools:tools", "--allow", "no-such-file"], "cannot read the allow-list"),
        (["bad_tools"], "expected MODULE:REGISTRY"),
    ],
)
def test_a_wrong_command_exits_2_with_a_message(project, args, message):
    done = check(project, *args)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_the_demo_and_built_in_tools_pass():
    done = check(ROOT, "workbench.mcp.demo:registry")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 unexpected" in done.stdout


def test_the_console_script_points_at_main(project, capsys, monkeypatch):
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"]["workbench"] == "workbench.__main__:main"
    monkeypatch.syspath_prepend(str(project))
    assert main(["check", "good_tools:tools", "--no-dry-run", "--no-resilience"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("OK: 0 errors")


@pytest.mark.parametrize("argv", [["--help"], ["check", "--help"]], ids=["workbench", "check"])
def test_the_help_reads_as_plain_text_with_an_example_and_the_exit_statuses(argv):
    shown = subprocess.run(
        [sys.executable, "-m", "workbench", *argv], capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    assert "``" not in text and ":class:" not in text  # no reStructuredText marks
    assert "workbench check my_tools:registry" in text
    assert "exit status: 0 when nothing fails, 1 when a check fails, 2 when" in text
