"""The npm tools the MCP tests run: installed into ``.node/`` by ``make node-tools`` (pinned in
``tests/node/``), never fetched by a test."""

from __future__ import annotations

import shutil
from pathlib import Path

NODE_BIN = Path(__file__).resolve().parents[2] / ".node" / "node_modules" / ".bin"


def node_tool(name: str) -> str:
    """The path of an installed npm executable (``mcp-inspector``, ``mcp-server-everything``,
    ``mcp-server-filesystem``); fails, saying how to install it, when it is missing."""
    path = NODE_BIN / name
    assert shutil.which("node"), "Node.js is not installed: the MCP interop tests need Node 20+"
    assert path.exists(), f"{path} is missing: run `make node-tools` (Node 20+ and npm)"
    return str(path)
