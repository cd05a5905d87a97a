"""How long ``import workbench`` takes in a fresh interpreter, against the 0.3 s goal (and
``import workbench.mcp``, against 0.5 s).

Each round starts a new Python process (the first cell of a notebook is a fresh kernel) and
times the import inside it, so interpreter start-up is not counted. The best of the rounds is
the figure: it is what the machine can do when nothing else competes for it. Beside it: the
same for ``import pydantic`` (the floor workbench's envelopes stand on), and which heavy
optional packages the import pulled in (none should be).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

GOAL_S = 0.3
# Packages a person pays for only when they use what needs them.
HEAVY = ("jsonschema", "pandas", "ipywidgets", "IPython", "anywidget", "mcp")

_PROBE = """
import json, sys, time
started = time.perf_counter()
import {module}
seconds = time.perf_counter() - started
heavy = [name for name in {heavy!r} if name in sys.modules]
print(json.dumps({{"seconds": seconds, "modules": len(sys.modules), "heavy": heavy}}))
"""


def measure(module: str, rounds: int = 5) -> dict[str, Any]:
    """The best of ``rounds`` fresh-process imports of ``module``."""
    root = str(Path(__file__).resolve().parent.parent)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
    }
    samples = []
    for _ in range(rounds):
        out = subprocess.run(
            [sys.executable, "-c", _PROBE.format(module=module, heavy=HEAVY)],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
        samples.append(json.loads(out.stdout))
    best = min(samples, key=lambda sample: sample["seconds"])
    return {
        "import": module,
        "best_s": best["seconds"],
        "worst_s": max(sample["seconds"] for sample in samples),
        "modules": best["modules"],
        "heavy_loaded": ", ".join(best["heavy"]) or "none",
    }


MCP_GOAL_S = 0.5
"""``import workbench.mcp``: the package alone, the MCP SDK loaded on the first use of a name."""


def run(rounds: int = 5) -> list[dict[str, Any]]:
    """``import workbench``, ``import workbench.mcp`` and ``import pydantic``, each the best of
    ``rounds``, with the goals."""
    rows = []
    for module, goal in (("workbench", GOAL_S), ("workbench.mcp", MCP_GOAL_S)):
        ours = measure(module, rounds)
        ours["goal_s"] = goal
        ours["met"] = "met" if ours["best_s"] < goal else "MISSED"
        rows.append(ours)
    return [*rows, measure("pydantic", rounds)]


if __name__ == "__main__":
    for row in run():
        print(row)
