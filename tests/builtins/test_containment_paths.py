"""Confinement without a window: file_read and artifact_read never read outside their root.

The race test swaps a directory under the root with a symbolic link to an outside directory, as
fast as another process can, while both tools read through that name in a loop; every outside
file holds a unique marker (in its content and in its name), and the number of results that
hold it must be zero. The other tests pin down the refusals: links that leave the root, loops,
over-long names, NUL bytes and surrogates, each ``invalid_args`` without an absolute host path.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

import workbench as wb
import workbench.builtins
from tests.conftest import wait_until

RACE_S = 10.0

SWAPPER = r"""
import ctypes, os, sys, time
here, name, other, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
os.chdir(here)
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
swaps, deadline = 0, time.monotonic() + seconds
open("started", "w").close()
while time.monotonic() < deadline:
    # name is a directory and other a link to the outside, then the other way round, atomically
    if libc.renameat2(AT_FDCWD, name.encode(), AT_FDCWD, other.encode(), RENAME_EXCHANGE):
        raise OSError(ctypes.get_errno(), "renameat2")
    swaps += 1
print(swaps)
"""


def outside_dir(tmp_path: Path, marker: str, file_name: str) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    (outside / file_name).write_text(f"{marker}\n")
    (outside / f"leak-{marker}.txt").write_text(f"{marker}\n")
    return outside


def start_swapper(directory: Path, name: str, seconds: float) -> subprocess.Popen[str]:
    """Swap ``directory/name`` (a directory) with ``directory/name.link`` (a link) for
    ``seconds``; prints how many swaps it made."""
    started = directory / "started"
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(directory), name, f"{name}.link", str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert wait_until(started.exists, timeout=10)
    started.unlink()
    return swapper


class Tally:
    """What a reader loop saw: results holding the marker, inside reads, refusals."""

    def __init__(self, marker: str) -> None:
        self.marker = marker
        self.calls = self.leaks = self.inside = self.refused = 0
        self.other: list[str] = []

    def add(self, call: wb.Call) -> None:
        self.calls += 1
        envelope = call.envelope
        seen = envelope.to_wire() + call.receipt
        if self.marker in seen:
            self.leaks += 1
        elif envelope.ok:
            self.inside += 1
        elif envelope.error.kind == "invalid_args" and "outside the root" in envelope.error.message:
            self.refused += 1
        else:
            self.other.append(envelope.error.message)


def read_loop(tools: wb.Registry, tally: Tally, name: str, args: list[dict], stop) -> None:
    while not stop.is_set():
        for arguments in args:
            call = tools.invoke(name, arguments)
            call.wait(30)
            tally.add(call)


@pytest.mark.slow
def test_swapping_a_directory_for_an_outside_link_never_leaks_a_byte(tmp_path):
    marker = f"OUTSIDE-{uuid.uuid4().hex}"
    tools = wb.Registry(history=":memory:", artifacts=tmp_path / "artifacts")
    root = tmp_path / "root"
    (root / "d").mkdir(parents=True)
    (root / "d" / "f.txt").write_text("inside\n")
    outside = outside_dir(tmp_path, marker, "f.txt")
    (outside / "stdout.log").write_text(f"{marker}\n")
    os.symlink(outside, root / "d.link")
    wb.builtins.register(tools, root=root)

    store = tools.artifacts.root
    (store / "call_race").mkdir(parents=True)
    (store / "call_race" / "stdout.log").write_text("inside artifact\n")
    os.symlink(outside, store / "call_race.link")
    artifact = str(store / "call_race" / "stdout.log")

    file_tally, artifact_tally = Tally(marker), Tally(marker)
    stop = threading.Event()
    # A little longer than RACE_S: the readers start after both swappers did.
    swappers = [
        start_swapper(root, "d", RACE_S + 1.0),
        start_swapper(store, "call_race", RACE_S + 1.0),
    ]
    file_args = [{"path": "d/f.txt"}, {"path": "d"}]
    artifact_args = [{"path": artifact}, {"path": artifact, "byte_offset": 0}]
    readers = [
        threading.Thread(target=read_loop, args=(tools, file_tally, "file_read", file_args, stop)),
        threading.Thread(
            target=read_loop, args=(tools, artifact_tally, "artifact_read", artifact_args, stop)
        ),
    ]
    started = time.monotonic()
    for reader in readers:
        reader.start()
    try:
        swaps = [int(swapper.communicate(timeout=RACE_S + 30)[0]) for swapper in swappers]
    finally:
        stop.set()
        for reader in readers:
            reader.join(60)
        for swapper in swappers:
            swapper.kill()
    assert time.monotonic() - started >= RACE_S
    for tally in (file_tally, artifact_tally):
        print(
            f"{tally.calls} calls: {tally.leaks} leaks, {tally.inside} inside, "
            f"{tally.refused} refused, {len(tally.other)} other {sorted(set(tally.other))[:3]}; "
            f"swaps {swaps}"
        )
        assert tally.leaks == 0
        # The race was real: both states of the name were met, many times.
        assert tally.inside > 0 and tally.refused > 0
        assert tally.calls > 200
    assert min(swaps) > 10_000


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "root"
    (path / "src" / "pkg").mkdir(parents=True)
    (path / "src" / "main.py").write_text("print('inside')\n")
    (path / "src" / "pkg" / "mod.py").write_text("x = 1\n")
    return path


@pytest.fixture
def builtins(tools: wb.Registry, root: Path):
    return wb.builtins.register(tools, root=root)


def refused(tools: wb.Registry, name: str, args: dict, host: Path) -> wb.ToolError:
    call = tools.invoke(name, args)
    envelope = call.wait(10)
    assert envelope.error is not None, call.receipt
    assert envelope.error.kind == "invalid_args" and envelope.error.field == "path"
    assert str(host) not in call.receipt and str(host) not in envelope.to_wire()
    return envelope.error


def test_links_that_stay_inside_are_followed(tools, builtins, root):
    os.symlink("src", root / "code")  # relative
    os.symlink(root / "src" / "pkg", root / "abs")  # absolute, inside
    os.symlink("../main.py", root / "src" / "pkg" / "up.py")  # climbs, stays inside
    os.symlink("code", root / "chain")  # a link to a link
    reads = {
        "code/main.py": "print('inside')\n",
        "abs/mod.py": "x = 1\n",
        "src/pkg/up.py": "print('inside')\n",
        "chain/pkg/up.py": "print('inside')\n",
    }
    for path, text in reads.items():
        envelope = tools.invoke("file_read", {"path": path}).wait(10)
        assert envelope.ok and envelope.result["text"] == text, path
        assert envelope.result["path"] == path
    listing = tools.invoke("file_read", {"path": "chain/pkg"}).wait(10).result
    assert {entry["name"] for entry in listing["entries"]} == {"mod.py", "up.py"}


def test_links_that_leave_the_root_are_refused_by_name(tools, builtins, root, tmp_path):
    (tmp_path / "secret.txt").write_text("secret\n")
    os.symlink("../../secret.txt", root / "src" / "sneaky.txt")
    os.symlink("/etc", root / "etc")
    os.symlink(tmp_path, root / "src" / "pkg" / "home")
    os.symlink("pkg/home", root / "src" / "via")
    cases = {
        "src/sneaky.txt": "src/sneaky.txt",
        "etc/passwd": "etc",
        "src/pkg/home/secret.txt": "src/pkg/home",
        "src/via/secret.txt": "src/pkg/home",
        "etc": "etc",
    }
    for path, link in cases.items():
        error = refused(tools, "file_read", {"path": path}, tmp_path)
        assert error.message == (
            f"`path` was refused: `{link}` is a symbolic link that points outside the root."
        ), path


def test_loops_long_names_nul_and_surrogates_are_refused_without_host_paths(
    tools, builtins, root, tmp_path
):
    os.symlink("loop-b", root / "loop-a")
    os.symlink("loop-a", root / "loop-b")
    os.symlink("self", root / "self")
    store = tools.artifacts.root
    (store / "call_x").mkdir(parents=True)
    os.symlink("loop", store / "call_x" / "loop")
    inputs = [
        ("loop-a", "loop of symbolic links"),
        ("self/x", "loop of symbolic links"),
        ("a" * 300, "longer than 255 bytes"),
        ("src/" + "b" * 256 + "/x", "longer than 255 bytes"),
        ("/".join(["c"] * 2100), "longer than 4096 bytes"),
        ("src/\x00main.py", "U+0000"),
        ("src/\ud800.py", "U+D800"),
        ("src/\udcff.py", "U+DCFF"),
    ]
    for path, reason in inputs:
        error = refused(tools, "file_read", {"path": path}, tmp_path)
        assert reason in error.message, (path[:40], error.message)
    artifact_inputs = {
        str(store / "call_x" / "loop"): "loop of symbolic links",
        str(store / "call_x" / ("a" * 300)): "longer than 255 bytes",
        str(store / "call_x" / "a\x00b"): "U+0000",
        str(store / "call_x" / "\ud800"): "U+D800",
        "/".join([str(store), *["c"] * 2100]): "longer than 4096 bytes",
    }
    for path, reason in artifact_inputs.items():
        error = refused(tools, "artifact_read", {"path": path}, tmp_path)
        assert reason in error.message, (path[:40], error.message)


def test_an_artifact_link_that_leaves_the_store_is_refused(tools, builtins, tmp_path):
    store = tools.artifacts.root
    (store / "call_y").mkdir(parents=True)
    (tmp_path / "elsewhere.log").write_text("not an artifact\n")
    os.symlink(tmp_path / "elsewhere.log", store / "call_y" / "stdout.log")
    error = refused(
        tools, "artifact_read", {"path": str(store / "call_y" / "stdout.log")}, tmp_path
    )
    assert error.message == (
        "`path` was refused: `call_y/stdout.log` is a symbolic link that points outside the root."
    )


def test_the_descriptions_say_hard_links_cannot_be_told_apart(tools, builtins):
    assert "hard link" in tools.spec("file_read").description
