"""One tool result of 300 MB, in a Chat Completions log and in an MCP capture. The load, run in
a child under a memory cap, keeps it whole as an artifact file, its row holds a preview, and
the memory the load adds stays within a small multiple of the result's size."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.transcripts.capped import MIB, in_child

SIZE = 300 * MIB
MULTIPLE = 4
"""What the load may add to memory, in multiples of the largest message: the message as read,
its value and the first lines detection looked at, and no copy per step of building its row."""

HEAD, TAIL = "<first line of the result>\n", "\n<last line of the result>"
FILL = "0123456789abcdef" * 4 + "\n"


def huge_result() -> str:
    """A 300 MB text whose first and last lines say which they are."""
    middle = SIZE - len(HEAD) - len(TAIL)
    return HEAD + FILL * (middle // len(FILL)) + "." * (middle % len(FILL)) + TAIL


def chat_log(path: Path) -> Path:
    call = {"id": "c0", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    small = {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "read it"},
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c0", "content": huge_result()},
        {"role": "assistant", "tool_calls": [small]},
        {"role": "tool", "tool_call_id": "c1", "content": "a small result"},
    ]
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


def mcp_capture(path: Path) -> Path:
    def line(message: dict) -> str:
        return json.dumps({"jsonrpc": "2.0", **message}) + "\n"

    with path.open("w", encoding="utf-8") as file:
        for number in (1, 2):
            arguments = {"path": f"{number}.txt"}
            params = {"name": "read", "arguments": arguments}
            file.write(line({"id": number, "method": "tools/call", "params": params}))
            text = huge_result() if number == 1 else "a small result"
            content = [{"type": "text", "text": text}]
            file.write(line({"id": number, "result": {"content": content}}))
    return path


# The artifact is read in the child: a history in memory keeps its artifacts in a temporary
# folder that goes when its process exits.
LOAD = """
import os

def read():
    rows = wb.transcripts.load(sys.argv[2]).rows()
    kept = rows[0]["artifacts"][0] if rows and rows[0]["artifacts"] else None
    shown = {}
    if kept is not None:
        with open(kept, "rb") as file:
            head = file.readline().decode()
            file.seek(-TAIL_BYTES, os.SEEK_END)
            shown = {"size": os.path.getsize(kept), "head": head, "tail": file.read().decode()}
    return {"receipt_chars": [row["receipt_chars"] for row in rows],
            "receipt_lengths": [len(row["receipt"]) for row in rows],
            "artifacts": [row["artifacts"] for row in rows],
            "kept": shown,
            "warnings": [row["warnings"] for row in rows]}
result = run(read)
""".replace("TAIL_BYTES", str(len(TAIL.encode())))


@pytest.mark.parametrize("write", [chat_log, mcp_capture], ids=["chat log", "MCP capture"])
def test_a_300_mb_result_is_kept_as_an_artifact_in_a_small_multiple_of_its_size(tmp_path, write):
    path = write(tmp_path / "run.json")
    result = in_child(LOAD, path, cap=2048 * MIB, timeout=300, cwd=tmp_path)
    assert "escaped" not in result, result
    assert result["receipt_chars"] == [SIZE, len("a small result")]
    (artifact,), none = result["artifacts"]
    assert none == [] and result["receipt_lengths"][0] < MIB  # a preview
    assert result["kept"] == {"size": SIZE, "head": HEAD, "tail": TAIL}
    assert any(artifact in warning for warning in result["warnings"][0])
    added = result["peak"] - result["before"]
    assert added < MULTIPLE * SIZE, f"{added / MIB:.0f} MiB for a {SIZE / MIB:.0f} MiB result"
