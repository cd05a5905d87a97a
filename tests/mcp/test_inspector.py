"""The served demo registry (the built-ins included) as the MCP Inspector CLI sees it, a client
nobody here wrote: ``--strict`` finds no schema problem, and calls read as a model would read
them. Over stdio (the Inspector starts ``python -m workbench.mcp serve``) and streamable HTTP."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.support import node_tool
from tests.mcp.test_server import DEMO, HttpServerProcess, served_root
from workbench import mcp as wbmcp

__all__ = ["served_root"]  # a fixture, shared with test_mcp_server

TRANSPORTS = ["stdio", "http"]
INSPECTOR_TIMEOUT_S = 120
PROBLEM = re.compile(r"^(Warning|Error): tool ", re.MULTILINE)
BUILTINS = {"shell_exec", "process", "file_read", "artifact_read"}


@pytest.fixture(scope="module")
def http_server(served_root: Path) -> Iterator[HttpServerProcess]:
    server = HttpServerProcess(served_root)
    yield server
    server.stop()


@pytest.fixture(params=TRANSPORTS)
def inspect(request: pytest.FixtureRequest, served_root: Path) -> Any:
    """``inspect(*options)``: run the Inspector CLI against the demo server over the test's
    transport; returns the finished process (stdout: JSON, stderr: its reports)."""
    inspector = node_tool("mcp-inspector")
    if request.param == "stdio":
        target = ["-e", f"WORKBENCH_DEMO_ROOT={served_root}", "--", *wbmcp.server_command(DEMO)]
    else:
        target = ["--", request.getfixturevalue("http_server").url]

    def run(*options: str) -> subprocess.CompletedProcess[str]:
        # No connect timeout of the Inspector's own (15 s by default): a server that takes
        # longer to start on a loaded machine is slow, not wrong; INSPECTOR_TIMEOUT_S bounds
        # only a run that never ends.
        return subprocess.run(
            [inspector, "--cli", "--connect-timeout", "0", *options, *target],
            capture_output=True,
            text=True,
            timeout=INSPECTOR_TIMEOUT_S,
            env={**os.environ, "NO_COLOR": "1"},
        )

    return run


def test_strict_mode_finds_no_schema_problem(inspect):
    listed = inspect("--strict", "--method", "tools/list")
    assert listed.returncode == 0, listed.stderr
    problems = PROBLEM.findall(listed.stderr)
    assert problems == [], listed.stderr  # 0 errors and 0 warnings
    assert "Schema portability" not in listed.stderr
    tools = {tool["name"]: tool for tool in json.loads(listed.stdout)["tools"]}
    assert BUILTINS | {"greet", "word_stats", "divide", "publish"} <= set(tools)
    # Only a tool that declares its own result advertises an output schema.
    assert {name for name, tool in tools.items() if "outputSchema" in tool} == {"word_stats"}


def test_calls_read_as_receipts_with_the_record_in_meta(inspect):
    stats = inspect("--method", "tools/call", "--tool-name", "word_stats", "--tool-arg", "text=a b")
    assert stats.returncode == 0, stats.stderr
    result = json.loads(stats.stdout)
    assert result["content"] == [{"type": "text", "text": '{"words": 2, "lines": 1, "chars": 3}'}]
    assert result["structuredContent"] == {"words": 2, "lines": 1, "chars": 3}
    record = result["_meta"][wbmcp.RECORD_META_KEY]
    assert record["status"] == "success" and record["result"] == result["structuredContent"]

    listing = inspect("--method", "tools/call", "--tool-name", "file_read", "--tool-arg", "path=.")
    assert listing.returncode == 0, listing.stderr
    result = json.loads(listing.stdout)
    assert "structuredContent" not in result  # no output schema, so the text is all there is
    assert "notes.txt" in result["content"][0]["text"]
    assert result["_meta"][wbmcp.RECORD_META_KEY]["result"]["kind"] == "listing"


def test_a_failure_is_is_error_with_the_receipt_as_text(inspect):
    failed = inspect("--method", "tools/call", "--tool-name", "lookup", "--tool-arg", "key=bob")
    assert failed.returncode != 0  # the Inspector reports a tool's isError as a failed run
    result = json.loads(failed.stdout)
    assert result["isError"] is True and "structuredContent" not in result
    text = result["content"][0]["text"]
    assert text.startswith("Error (not_found): No entry `bob`; known keys: ada, alan.")
    assert result["_meta"][wbmcp.RECORD_META_KEY]["error"]["kind"] == "not_found"
