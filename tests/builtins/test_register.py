"""wb.builtins.register: the four built-ins, their declarations, and what every one refuses."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import workbench as wb
import workbench.builtins

NAMES = ["shell_exec", "process", "file_read", "artifact_read"]
VALID = {
    "shell_exec": {"command": "true"},
    "process": {"action": "poll", "pid": 1},
    "file_read": {"path": "."},
    "artifact_read": {"path": "x"},
}


@pytest.fixture
def builtins(tools: wb.Registry, tmp_path: Path) -> workbench.builtins.Builtins:
    (tmp_path / "root").mkdir()
    return wb.builtins.register(tools, root=tmp_path / "root")


def test_register_declares_the_four_built_ins(tools, builtins, tmp_path):
    assert [tool.name for tool in builtins] == NAMES
    assert tools.names() == NAMES
    assert builtins.root == (tmp_path / "root").resolve()
    assert tools.spec("shell_exec").family == "command" and tools.spec("shell_exec").streaming
    assert tools.spec("shell_exec").timeout is None
    assert tools.spec("file_read").read_only and tools.spec("artifact_read").read_only
    assert tools.spec("file_read").family == "file"


@pytest.mark.parametrize("name", NAMES)
def test_every_built_in_refuses_unknown_properties(tools, builtins, name):
    assert tools.spec(name).input_schema["additionalProperties"] is False
    call = tools.invoke(name, {**VALID[name], "bogus": 1})
    error = call.wait(10).error
    assert error is not None and error.kind == "invalid_args" and error.field == "bogus"


def test_registering_again_replaces_the_built_ins(tools, builtins):
    again = wb.builtins.register(tools, root=builtins.root, listing_limit=3)
    assert tools.names() == NAMES and tools["file_read"] is again.file_read


def test_the_root_must_be_an_existing_directory(tools, tmp_path):
    with pytest.raises(NotADirectoryError):
        wb.builtins.register(tools, root=tmp_path / "missing")
    with pytest.raises(ValueError, match="listing_limit"):
        wb.builtins.register(tools, root=tmp_path, listing_limit=0)


def test_shell_exec_can_ask_before_every_command(tools, tmp_path):
    (tmp_path / "root").mkdir()
    wb.builtins.register(tools, root=tmp_path / "root", shell_permission="always_ask")
    call = tools.invoke("shell_exec", {"command": "echo approved"})
    deadline = time.monotonic() + 5
    while call.state != "awaiting_approval" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert call.state == "awaiting_approval"
    call.approve()
    assert call.wait(10).result["stdout_preview"] == "approved\n"
