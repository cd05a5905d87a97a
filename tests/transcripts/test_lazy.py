"""The first ``load`` in a process imports only what reading a transcript needs: the heavy
packages (jsonschema with its format checkers, pandas, numpy, the widgets) wait until asked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).parents[1] / "data" / "transcripts"
HEAVY = ("jsonschema", "pandas", "numpy", "ipywidgets", "anywidget", "IPython", "inspect_ai")

FIRST_LOAD = """
import json, sys
import workbench as wb
history = wb.transcripts.load(sys.argv[1])
loaded = [name for name in json.loads(sys.argv[2]) if name in sys.modules]
print(json.dumps({"rows": len(history), "preflight": sorted(
    {event["preflight"] for row in history.rows() for event in row["events"]}), "heavy": loaded}))
"""


def first_load(path: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", FIRST_LOAD, str(path), json.dumps(HEAVY)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_the_first_load_imports_no_heavy_package():
    # the run's schemas are checked (accepted, coerced and unknown_tool verdicts) all the same
    found = first_load(DATA / "openai_chat_pairs.jsonl")
    assert found["rows"] == 5
    assert found["preflight"] == ["accepted", "coerced", "unknown_tool"]
    assert found["heavy"] == []


def test_a_call_the_schema_rejects_still_gets_its_message(tmp_path):
    # arguments that fail the fast check need the full validator, imported then and only then
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    run = {
        "tools": [{"type": "function", "function": {"name": "weather", "parameters": schema}}],
        "messages": [
            {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
             "function": {"name": "weather", "arguments": '{"town": "Bern"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "no city given"},
        ],
    }  # fmt: skip
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run), encoding="utf-8")
    found = first_load(path)
    assert found["preflight"] == ["rejected"]
    assert found["heavy"] == ["jsonschema"]
