"""What a process makes in the temporary folder goes when it exits: the artifacts of a history
kept in memory, and the MCP demo's workspace (issue 48: about 350 such folders gathered on a
machine in a day)."""

from __future__ import annotations

import os
import subprocess
import sys

CALLS_WITH_ARTIFACTS = """
import os, sys
import workbench as wb

tools = wb.Registry(history=":memory:")

@tools.tool
def lines(count: int) -> str:
    \"\"\"Many lines.\"\"\"
    return "".join(f"line {n}\\n" for n in range(count))

envelope = tools.invoke("lines", {"count": 100_000}).wait(60)
assert envelope.artifacts, envelope
assert os.path.exists(envelope.artifacts[0].path)
print(tools.artifacts.root)
if sys.argv[1] == "fork":
    child = os.fork()
    if child == 0:
        sys.exit(0)  # a forked child exiting normally runs the exit handlers too
    os.waitpid(child, 0)
    print(os.path.isdir(tools.artifacts.root))
"""


def run(tmp_path, program: str, *arguments: str) -> list[str]:
    """What ``program`` printed, run in a fresh interpreter whose temporary folder is
    ``tmp_path``; it must end cleanly and print nothing on stderr."""
    ran = subprocess.run(
        [sys.executable, "-c", program, *arguments],
        env={**os.environ, "TMPDIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stderr == ""
    return ran.stdout.split()


def test_a_history_in_memory_leaves_no_artifacts_once_its_process_exits(tmp_path):
    (root,) = run(tmp_path, CALLS_WITH_ARTIFACTS, "plain")
    assert root.startswith(str(tmp_path.resolve()))
    assert sorted(os.listdir(tmp_path)) == []


def test_a_forked_child_that_exits_leaves_its_parents_artifacts_alone(tmp_path):
    _, alive_after_the_child = run(tmp_path, CALLS_WITH_ARTIFACTS, "fork")
    assert alive_after_the_child == "True"
    assert sorted(os.listdir(tmp_path)) == []


def test_the_mcp_demos_workspace_goes_with_its_process(tmp_path):
    program = "import workbench.mcp.demo as demo; print(len(demo.registry().names()))"
    (tools,) = run(tmp_path, program)
    assert int(tools) > 0
    assert sorted(os.listdir(tmp_path)) == []
