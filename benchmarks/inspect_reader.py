"""Importing inspect_ai's own logs: ``wb.transcripts.load`` beside inspect_ai's
``read_eval_log`` and ``json.loads`` of the same file, in one run.

The log is written by inspect_ai itself: a real scripted run (its mock model, offline;
``tests/data/transcripts/make_inspect_logs.py``) read back with inspect_ai's reader, its
samples repeated (each with an id of its own) until the log holds the calls asked for, and
written again with inspect_ai's ``write_eval_log``, as ``.json`` and as ``.eval``. Issue 39's
goals: at least 3x faster than inspect_ai's reader, and at most 2x the time ``json.loads``
takes to parse the same file (the ``.json`` log; an ``.eval`` archive is a zip of JSON files,
parsed member by member).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import workbench as wb

SCRIPT = Path(__file__).parents[1] / "tests" / "data" / "transcripts" / "make_inspect_logs.py"
FASTER_THAN_INSPECT_GOAL = 3.0
JSON_LOADS_GOAL = 2.0
COLUMNS = [
    "log",
    "calls",
    "file_mb",
    "workbench_s",
    "read_eval_log_s",
    "json_loads_s",
    "times_faster_than_inspect",
    "goal_inspect",
    "met_inspect",
    "times_json_loads",
    "goal_json",
    "met_json",
]


def write_logs(directory: Path, calls: int) -> dict[str, tuple[Path, int]]:
    """inspect_ai's own ``.json`` and ``.eval`` logs of about ``calls`` tool calls: suffix →
    (path, the calls it holds)."""
    from inspect_ai.log import read_eval_log, write_eval_log

    made = directory / "made"
    made.mkdir()
    env = {**os.environ, "INSPECT_LOG_DIR": str(made), "NO_COLOR": "1"}
    subprocess.run(
        [sys.executable, str(SCRIPT), str(made)], check=True, env=env, capture_output=True
    )
    scripted = read_eval_log(str(next(made.glob("*.json"))))
    assert scripted.samples
    sample = scripted.samples[0]
    per_sample = sum(
        len(message.tool_calls or []) for message in sample.messages if message.role == "assistant"
    )
    copies = max(1, calls // max(1, per_sample))
    scripted.samples = [
        sample.model_copy(update={"id": f"{sample.id}-{number}"}) for number in range(copies)
    ]
    found = {}
    for suffix in (".json", ".eval"):
        path = directory / f"scaled{suffix}"
        write_eval_log(scripted, str(path))
        found[suffix] = (path, copies * per_sample)
    return found


def parse_only(path: Path) -> Any:
    """``json.loads`` of the file's JSON: the file itself, or each member of an archive."""
    if path.suffix == ".eval":
        with zipfile.ZipFile(path) as archive:
            return [json.loads(archive.read(name)) for name in archive.namelist()]
    return json.loads(path.read_bytes())


def _best(function: Callable[[], Any], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - started)
    return best


def run(calls: int = 10_000, rounds: int = 3) -> list[dict[str, Any]]:
    """One row per log kind: best seconds of each reader, interleaved round by round."""
    from inspect_ai.log import read_eval_log

    rows = []
    with tempfile.TemporaryDirectory() as directory:
        for suffix, (path, held) in write_logs(Path(directory), calls).items():

            def ours(path: Path = path) -> None:
                wb.transcripts.load(path).close()

            ours()  # imports what either reader imports on first use (jsonschema: seconds)
            read_eval_log(str(path))
            times = {"ours": float("inf"), "inspect": float("inf"), "json": float("inf")}
            for _ in range(rounds):  # interleaved: load on the machine weighs on all three
                times["ours"] = min(times["ours"], _best(ours, 1))
                times["inspect"] = min(
                    times["inspect"], _best(lambda p=path: read_eval_log(str(p)), 1)
                )
                times["json"] = min(times["json"], _best(lambda p=path: parse_only(p), 1))
            faster = times["inspect"] / times["ours"]
            over_json = times["ours"] / times["json"]
            rows.append(
                {
                    "log": f"inspect_ai {suffix}",
                    "calls": held,
                    "file_mb": path.stat().st_size / 1e6,
                    "workbench_s": times["ours"],
                    "read_eval_log_s": times["inspect"],
                    "json_loads_s": times["json"],
                    "times_faster_than_inspect": faster,
                    "goal_inspect": f"≥ {FASTER_THAN_INSPECT_GOAL:g}x",
                    "met_inspect": "met" if faster >= FASTER_THAN_INSPECT_GOAL else "MISSED",
                    "times_json_loads": over_json,
                    "goal_json": f"≤ {JSON_LOADS_GOAL:g}x",
                    "met_json": "met" if over_json <= JSON_LOADS_GOAL else "MISSED",
                }
            )
    return rows


if __name__ == "__main__":
    from benchmarks.__main__ import table

    print(table(run(), COLUMNS))
