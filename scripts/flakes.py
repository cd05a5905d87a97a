"""Count flakes: run the timing-sensitive tests several times while every core is kept busy,
and say how often each test failed.

``python -m scripts.flakes --runs N PATH...`` starts one busy loop per core (a CPU hog, like
``stress --cpu``), runs ``pytest PATH...`` N times one after another the way ``make test``
does (its processes, its units), each run writing a JUnit report, then stops the hog (its own
processes, by pid) and prints every test that failed or errored at least once with its count.
The exit status is 1 when any test failed, so ``make flakes`` fails with it.
"""

from __future__ import annotations

import argparse
import collections
import os
import signal
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BUSY = "while True: pass"


@contextmanager
def cpu_hog(cores: int) -> Iterator[list[int]]:
    """``cores`` busy loops for as long as the block runs; their pids."""
    hogs = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(cores)]
    try:
        yield [hog.pid for hog in hogs]
    finally:
        for hog in hogs:
            hog.send_signal(signal.SIGTERM)
        for hog in hogs:
            hog.wait(30)


def failures_in(report: Path) -> tuple[int, list[str]]:
    """How many tests a JUnit report holds, and the ids of those that failed or errored."""
    tests, failed = 0, []
    for case in ElementTree.parse(report).iter("testcase"):
        tests += 1
        if case.find("failure") is not None or case.find("error") is not None:
            failed.append(f"{case.get('classname')}::{case.get('name')}")
    return tests, failed


class Stopped(Exception):
    """SIGTERM arrived: the run under way is stopped and the hog with it."""


def _stop(signum: int, frame: object) -> None:
    raise Stopped(f"signal {signum}")


def run_pytest(command: list[str]) -> None:
    """``command`` run to its end; stopped as after Ctrl-C (it then stops what it started)
    if this script is told to stop."""
    process = subprocess.Popen(command)
    try:
        process.wait()
    except Stopped:
        process.send_signal(signal.SIGTERM)
        process.wait()
        raise


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workers", default=os.environ.get("TEST_WORKERS", "3"))
    parser.add_argument("paths", nargs="+")
    options = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)
    counts: collections.Counter[str] = collections.Counter()
    ran = []
    with tempfile.TemporaryDirectory(prefix="wb-flakes-") as scratch, cpu_hog(os.cpu_count() or 2):
        for number in range(1, options.runs + 1):
            report = Path(scratch) / f"run-{number}.xml"
            command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
            command += ["-n", options.workers, "--dist", "loadgroup", "--no-loadscope-reorder"]
            command += [f"--junitxml={report}", *options.paths]
            print(f"flakes: run {number} of {options.runs} under load", flush=True)
            run_pytest(command)
            assert report.exists(), f"run {number} wrote no report: pytest did not get going"
            tests, failed = failures_in(report)
            ran.append(tests)
            counts.update(failed)
            print(f"flakes: run {number}: {len(failed)} of {tests} tests failed", flush=True)
    print(f"flakes: {options.runs} runs of {', '.join(options.paths)} ({ran} tests) under load")
    for name, count in counts.most_common():
        print(f"  {count}/{options.runs}  {name}")
    print(f"flakes: {len(counts)} tests failed at least once")
    return 1 if counts else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
