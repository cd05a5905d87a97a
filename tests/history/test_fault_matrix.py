"""Nothing lost: real faults against a real SQLite file, each counting rows written against rows
read back. The number that must be zero is the number of calls with no row.

Faults: a process killed with SIGKILL right after ``wait()`` returns, a process that simply
exits, a second process holding the write lock past the busy timeout, a full disk (a 1 MiB
tmpfs), a read-only directory (a tmpfs remounted read-only), a corrupt and a truncated file.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

import workbench as wb
from tests.conftest import wait_until
from tests.history.support import durable_ids, spills, stored_ids
from workbench.history import HistoryWarning
from workbench.runtime import call_html


@pytest.fixture(autouse=True)
def _as_root() -> None:
    """The real faults (a small tmpfs filled, a read-only remount) need root, which this
    project's tests and CI run as: without it the matrix fails, it is never skipped."""
    assert os.geteuid() == 0, "the fault matrix mounts a tmpfs: run the tests as root"


CHILD_PRELUDE = """
import json, os, signal, sys
import workbench as wb

tools = wb.Registry(history=sys.argv[1])

@tools.tool
def add(a: int, b: int = 0) -> int:
    '''Add two numbers.'''
    return a + b
"""


def run_child(tmp_path: Path, body: str, *args: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "child.py"
    script.write_text(CHILD_PRELUDE + textwrap.dedent(body))
    return subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=os.environ.copy(),
        check=False,
    )


def reopened_ids(path: Path) -> list[str]:
    """The call ids SQLite holds once the history was opened again, which writes the spills a
    killed process left; none is left after."""
    history = wb.History(path)
    history.rows()  # the file is opened on first use
    history.close()
    assert spills(path) == [], "a spill that was written was left behind"
    return stored_ids(path)


def lost(written: list[str], read_back: list[str]) -> list[str]:
    present = set(read_back)
    return [call_id for call_id in written if call_id not in present]


@contextlib.contextmanager
def tmpfs(directory: Path, size: str = "1m") -> Iterator[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(directory)], check=True
    )
    try:
        yield directory
    finally:
        subprocess.run(["umount", "-l", str(directory)], check=True)


def fill(directory: Path) -> Path:
    """Fill the filesystem of ``directory`` to the last byte; returns the filler file."""
    filler = directory / "filler"
    with filler.open("wb", buffering=0) as handle:
        block = b"\0" * 65536
        with contextlib.suppress(OSError):
            while True:
                handle.write(block)
        with contextlib.suppress(OSError):
            while True:
                handle.write(b"\0")
    return filler


def registry_at(path: Path, **history_options: object) -> wb.Registry:
    tools = wb.Registry(
        history=wb.History(path, **history_options),  # type: ignore[arg-type]
        artifacts=path.parent.parent / "artifacts",
    )

    @tools.tool
    def add(a: int, b: int = 0) -> int:
        """Add two numbers."""
        return a + b

    @tools.tool
    def echo(text: str) -> str:
        """Return the text."""
        return text

    return tools


# ── the process ends ────────────────────────────────────────────────────────────────────


def test_a_process_killed_right_after_wait_returns_loses_no_row(tmp_path):
    history = tmp_path / "history.sqlite"
    child = run_child(
        tmp_path,
        """
        ids = []
        for i in range(20):
            call = tools.invoke("add", {"a": i, "b": "1"})
            call.wait(30)
            ids.append(call.id)
        many = tools.invoke_many([("add", {"a": i}) for i in range(30)])
        for call in many:
            call.wait(30)
        ids += [call.id for call in many]
        last = tools.invoke("add", {"a": 1})
        last.wait(30)
        ids.append(last.id)
        print(json.dumps(ids), flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """,
        str(history),
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    written = json.loads(child.stdout)
    assert len(written) == 51
    assert lost(written, reopened_ids(history)) == []


def test_a_process_killed_from_outside_keeps_every_call_it_reported_ended(tmp_path):
    history = tmp_path / "history.sqlite"
    script = tmp_path / "child.py"
    script.write_text(
        CHILD_PRELUDE
        + textwrap.dedent(
            """
            import asyncio

            async def main():
                i = 0
                while True:
                    call = tools.invoke("add", {"a": i})
                    await call  # awaited in asyncio code this time
                    print(call.id, flush=True)
                    i += 1

            asyncio.run(main())
            """
        )
    )
    with subprocess.Popen(
        [sys.executable, str(script), str(history)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=os.environ.copy(),
    ) as child:
        assert child.stdout is not None
        reported = [child.stdout.readline().strip() for _ in range(300)]
        child.send_signal(signal.SIGKILL)
        child.wait()
        reported += [line.strip() for line in child.stdout if line.strip()]
    assert child.returncode == -signal.SIGKILL
    assert len(reported) >= 300
    assert lost(reported, reopened_ids(history)) == []


def test_a_script_that_ends_after_its_last_call_keeps_every_row(tmp_path):
    history = tmp_path / "history.sqlite"
    child = run_child(
        tmp_path,
        """
        ids = [tools.invoke("add", {"a": i}).id for i in range(10)]
        print(json.dumps(ids), flush=True)
        tools.invoke("add", {"a": 1, "b": 2}).wait()
        """,
        str(history),
    )
    assert child.returncode == 0, child.stderr
    written = json.loads(child.stdout)
    read_back = stored_ids(history)
    assert lost(written, read_back) == []
    assert len(read_back) == 11


# ── another process holds the lock ──────────────────────────────────────────────────────


def hold_lock(path: Path, seconds: float) -> subprocess.Popen[str]:
    code = textwrap.dedent(
        f"""
        import sqlite3, time
        conn = sqlite3.connect({str(path)!r}, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        print("locked", flush=True)
        time.sleep({seconds})
        conn.execute("COMMIT")
        """
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "locked"
    holder.stdout.close()
    return holder


def test_a_lock_held_past_the_busy_timeout_sends_rows_to_the_spill_then_to_sqlite(tmp_path):
    path = tmp_path / "db" / "history.sqlite"
    tools = registry_at(path, busy_timeout=0.1, attempts=2)
    written = [tools.invoke("add", {"a": 0}).wait(10).call_id]
    holder = hold_lock(path, 30)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            calls = [tools.invoke("add", {"a": i}) for i in range(8)]
            written += [call.wait(30).call_id for call in calls]
            # While the lock is held the rows are in the spill, and reading still shows them.
            assert lost(written, [row["call_id"] for row in tools.history.rows()]) == []
        assert len(stored_ids(path)) == 1
        problems = [problem.message for problem in tools.history.problems]
        assert problems and all("database is locked" in message for message in problems)
        assert any(issubclass(w.category, HistoryWarning) for w in caught)
        assert not tools.history.health().ok
        assert tools.history.spill_path is not None and tools.history.spill_path.exists()
    finally:
        holder.kill()
        holder.wait()
    tools.history.close()

    reopened = wb.History(path)
    assert lost(written, [row["call_id"] for row in reopened.rows()]) == []
    assert lost(written, stored_ids(path)) == []
    assert reopened.spill_path is None and spills(path) == []
    assert reopened.health().ok


def test_a_lock_released_within_the_retries_lands_rows_directly(tmp_path):
    path = tmp_path / "db" / "history.sqlite"
    tools = registry_at(path, busy_timeout=0.5, attempts=3)
    tools.invoke("add", {"a": 0}).wait(10)
    holder = hold_lock(path, 0.3)
    try:
        written = [tools.invoke("add", {"a": i}).wait(30).call_id for i in range(3)]
    finally:
        holder.wait()
    assert lost(written, stored_ids(path)) == []
    assert tools.history.problems == []


# ── the disk fills ──────────────────────────────────────────────────────────────────────


def test_a_full_disk_loses_no_history_row(tmp_path):
    disk = tmp_path / "disk"
    with tmpfs(disk):
        path = disk / "history.sqlite"
        tools = registry_at(path)
        written = [tools.invoke("add", {"a": 0}).wait(10).call_id]
        filler = fill(disk)
        big = "x" * 8_000  # each row needs fresh pages on a disk with none left
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", HistoryWarning)
            written += [tools.invoke("echo", {"text": big}).wait(30).call_id for _ in range(6)]
        assert tools.history.problems, "the disk never filled: the fault did not happen"
        assert any("full" in problem.message for problem in tools.history.problems)
        assert lost(written, [row["call_id"] for row in tools.history.rows()]) == []
        tools.history.close()

        filler.unlink()
        reopened = wb.History(path)
        assert lost(written, [row["call_id"] for row in reopened.rows()]) == []
        assert lost(written, stored_ids(path)) == []
        assert [row["receipt"] for row in reopened.rows()][1:] == [big] * 6
        reopened.close()


# ── the directory is read-only ──────────────────────────────────────────────────────────


def test_a_read_only_history_directory_loses_no_row(tmp_path):
    disk = tmp_path / "disk"
    with tmpfs(disk, "4m"):
        path = disk / "history.sqlite"
        first = registry_at(path)
        written = [first.invoke("add", {"a": 0}).wait(10).call_id]
        first.history.close()
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)

        tools = registry_at(path)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", HistoryWarning)
            written += [tools.invoke("add", {"a": i}).wait(30).call_id for i in range(5)]
            assert lost(written, [row["call_id"] for row in tools.history.rows()]) == []
        assert any("read-only" in problem.message for problem in tools.history.problems)
        tools.history.close()

        subprocess.run(["mount", "-o", "remount,rw", str(disk)], check=True)
        reopened = wb.History(path)
        assert lost(written, [row["call_id"] for row in reopened.rows()]) == []
        assert lost(written, stored_ids(path)) == []
        reopened.close()


# ── the file is damaged ─────────────────────────────────────────────────────────────────


def test_a_corrupt_file_is_kept_aside_and_a_new_history_loses_no_row(tmp_path):
    path = tmp_path / "db" / "history.sqlite"
    path.parent.mkdir()
    garbage = b"this was never a database\n" * 400
    path.write_bytes(garbage)

    tools = registry_at(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HistoryWarning)
        written = [tools.invoke("add", {"a": i}).wait(10).call_id for i in range(10)]
    assert lost(written, [row["call_id"] for row in tools.history.rows()]) == []
    assert lost(written, stored_ids(path)) == []
    aside = [p for p in path.parent.iterdir() if ".unreadable-" in p.name and "-wal" not in p.name]
    assert [p.read_bytes() for p in aside] == [garbage]
    health = tools.history.health()
    assert health.moved_aside == (aside[0].name,) and not health.ok
    assert any(problem.kind == "corrupt" for problem in tools.history.problems)


def test_opening_a_corrupt_file_to_read_it_never_raises(tmp_path):
    path = tmp_path / "history.sqlite"
    path.write_bytes(b"\x00garbage" * 1000)
    history = wb.History(path)
    with pytest.warns(HistoryWarning, match="could not be read by SQLite"):
        assert history.rows() == []
    assert history.to_dataframe().empty and history.envelopes() == []
    assert len(history.health().moved_aside) == 1


def test_a_truncated_file_is_kept_aside_and_later_rows_are_all_kept(tmp_path):
    path = tmp_path / "db" / "history.sqlite"
    before = registry_at(path)
    early = [before.invoke("echo", {"text": "y" * 3000}).wait(10).call_id for _ in range(40)]
    before.history.close()
    size = path.stat().st_size
    with path.open("r+b") as handle:
        handle.truncate(size // 3)

    tools = registry_at(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HistoryWarning)
        read = tools.history.rows()  # never raises
        written = [tools.invoke("add", {"a": i}).wait(10).call_id for i in range(10)]
        rows = tools.history.rows()
    read_back = [row["call_id"] for row in rows]
    assert lost(written, read_back) == []
    assert lost(written, stored_ids(path)) == []
    # What could be read of the damaged file came along; all of it is kept aside.
    assert {row["call_id"] for row in read} <= set(early)
    assert any(problem.kind == "corrupt" for problem in tools.history.problems)
    assert tools.history.health().moved_aside


# ── artifacts on a full disk ────────────────────────────────────────────────────────────


def test_a_full_disk_gives_short_artifacts_a_warning_and_an_honest_receipt(tmp_path):
    disk = tmp_path / "disk"
    root = tmp_path / "root"
    root.mkdir()
    with tmpfs(disk):
        tools = wb.Registry(history=tmp_path / "history.sqlite", artifacts=disk)
        wb.builtins.register(tools, root=root)
        produced = 5_000_005
        call = tools.invoke(
            "shell_exec", {"command": f"head -c {produced} /dev/zero | tr '\\\\0' x"}
        )
        envelope = call.wait(60)
        result = envelope.result
        assert result["stdout_bytes"] == produced
        artifact = tools.artifacts.resolve(envelope.artifacts[result["stdout_artifact"]])
        kept = artifact.stat().st_size
        assert 0 < kept < produced
        assert result["stdout_kept_bytes"] == kept
        assert f"full stdout ({produced} bytes)" not in call.receipt
        assert f"only {kept} of {produced} bytes kept" in call.receipt
        assert any(
            f"{produced} bytes produced, only {kept} kept" in warning and "No space" in warning
            for warning in envelope.warnings
        )
        row = tools.history.get(call.id)
        assert row is not None and row["status"] == "success" and row["receipt"] == call.receipt
        tools.history.close()


def test_a_whole_artifact_written_to_a_full_disk_is_named_short(tmp_path):
    disk = tmp_path / "disk"
    with tmpfs(disk):
        tools = wb.Registry(history=tmp_path / "history.sqlite", artifacts=disk)

        @tools.tool
        def big_text() -> str:
            """A long text."""
            return "y" * 3_000_000

        @tools.tool
        def big_json() -> dict:
            """A large object."""
            return {"rows": ["w" * 100] * 30_000}

        for name in ("big_text", "big_json"):
            call = tools.invoke(name)
            envelope = call.wait(30)
            assert envelope.ok
            assert any("bytes produced, only" in warning for warning in envelope.warnings)
            assert "bytes produced, only" in call.receipt
            assert "full " not in call.receipt and "partial " in call.receipt
        tools.history.close()


def test_every_file_a_generator_spilled_is_listed_in_its_envelope(tmp_path):
    tools = wb.Registry(history=tmp_path / "history.sqlite")

    @tools.tool
    def chatter():
        """Print a lot as it goes."""
        for _ in range(40):
            yield "z" * 65_536 + "\n"

    call = tools.invoke("chatter")
    envelope = call.wait(30)
    assert envelope.ok and call.output_size() > 2_000_000
    listed = {tools.artifacts.resolve(ref) for ref in envelope.artifacts}
    on_disk = {path.resolve() for path in tools.artifacts.call_dir(call.id).iterdir()}
    assert on_disk and on_disk <= listed


@contextlib.contextmanager
def no_disk_takes_a_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Path, str]]:
    """A history with one row on a disk, then that disk and the temporary directory (where the
    spill goes when the history's own directory refuses it) both read-only; yields the
    history's path and the row's id. The test makes them writable again; the mounts are
    removed at the end."""
    disk, spare = tmp_path / "disk", tmp_path / "spare"
    with tmpfs(disk), tmpfs(spare):
        path = disk / "history.sqlite"
        first = registry_at(path)
        first_id = first.invoke("add", {"a": 0}).wait(10).call_id
        first.history.close()
        # Read-only, not full: a full disk can free space itself as SQLite rolls back.
        for mount in (disk, spare):
            subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        monkeypatch.setattr("tempfile.tempdir", str(spare))
        assert first_id is not None
        yield path, first_id
        for mount in (disk, spare):
            subprocess.run(["mount", "-o", "remount,rw", str(mount)], check=False)


def test_rows_no_disk_will_take_are_held_and_written_once_one_does(tmp_path, monkeypatch):
    with no_disk_takes_a_byte(tmp_path, monkeypatch) as (path, first_id):
        written = [first_id]
        tools = registry_at(path)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", HistoryWarning)
            written += [tools.invoke("add", {"a": i}).wait(30).call_id for i in range(3)]
            assert lost(written, [row["call_id"] for row in tools.history.rows()]) == []
        assert any("held in memory" in problem.message for problem in tools.history.problems)
        assert not tools.history.health().ok and tools.history.health().held_rows == 3

        for mount in (path.parent, Path(tempfile.gettempdir())):
            subprocess.run(["mount", "-o", "remount,rw", str(mount)], check=True)
        written.append(tools.invoke("add", {"a": 9}).wait(30).call_id)
        tools.history.close()
        assert lost(written, stored_ids(path)) == []
        assert len(stored_ids(path)) == 5


WRITTEN_AGAIN = re.compile(r"(\d+) row\(s\) held in .+? were written to the history")


def test_rows_held_when_no_disk_takes_them_are_written_the_moment_space_returns(
    tmp_path, monkeypatch
):
    with no_disk_takes_a_byte(tmp_path, monkeypatch) as (path, first_id):
        written = [first_id]
        tools = registry_at(path)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", HistoryWarning)
            calls = [tools.invoke("echo", {"text": "kept"}) for _ in range(4)]
            for call in calls:
                call.wait(30)
            written += [call.id for call in calls]
            assert tools.history.health().held_rows == 4, "the fault did not happen"
            # The card of each call whose row is held says so, and what that risks.
            for call in calls:
                card = call_html(call)
                assert "held in memory only" in card and "lost if this process ends" in card

            # Space returns; no call is made, nothing is flushed: the held rows are written, to
            # SQLite or (when a connection opened read-only still refuses) to the journal.
            subprocess.run(["mount", "-o", "remount,rw", str(path.parent)], check=True)
            for _ in range(200):
                if lost(written, durable_ids(path)) == []:
                    break
                time.sleep(0.05)
            assert lost(written, durable_ids(path)) == []

        # The writer says so just after its commit, which a reader of the file may see first.
        # Held in memory, the rows may reach the spill first once the disk takes bytes again
        # ("held in history.sqlite.spill-…"), then SQLite: either way all 4 are said written.
        def said() -> list[str]:
            return [p.message for p in tools.history.problems]

        def said_written() -> int:
            found = (WRITTEN_AGAIN.search(message) for message in said())
            return sum(int(match[1]) for match in found if match)

        assert wait_until(lambda: said_written() == 4, 10), "\n".join(said())
        tools.history.close()
        reopened = wb.History(path)
        assert lost(written, [row["call_id"] for row in reopened.rows()]) == []
        reopened.close()
        assert lost(written, stored_ids(path)) == []


def test_a_listing_cut_onto_a_full_disk_says_what_was_kept(tmp_path):
    disk, root = tmp_path / "disk", tmp_path / "root"
    (root / "many").mkdir(parents=True)
    for index in range(600):
        (root / "many" / f"entry-{index:04}.txt").touch()
    with tmpfs(disk):
        tools = wb.Registry(history=tmp_path / "history.sqlite", artifacts=disk)
        wb.builtins.register(tools, root=root)
        fill(disk)
        call = tools.invoke("file_read", {"path": "many"})
        envelope = call.wait(30)
        assert envelope.ok, envelope.error
        assert any("bytes produced, only 0 kept" in w for w in envelope.warnings)
        assert "partial listing (only 0 bytes of it kept)" in call.receipt
        assert "full " not in call.receipt
        tools.history.close()


# ── a registry served over MCP ──────────────────────────────────────────────────────────


@pytest.mark.anyio
async def test_a_registry_served_over_mcp_keeps_every_call_after_the_client_disconnects(tmp_path):
    from mcp import Client, StdioServerParameters

    from workbench import mcp as wbmcp

    history = tmp_path / "served-history.sqlite"
    (tmp_path / "served.py").write_text(
        textwrap.dedent(
            f"""
            import workbench as wb

            registry = wb.Registry(history={str(history)!r})

            @registry.tool
            def add(a: int, b: int = 0) -> int:
                '''Add two numbers.'''
                return a + b
            """
        )
    )
    argv = wbmcp.server_command("served:registry")
    paths = [str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])]
    target = StdioServerParameters(
        command=argv[0], args=argv[1:], env={"PYTHONPATH": os.pathsep.join(paths)}, cwd=tmp_path
    )
    async with Client(target) as client:
        for i in range(20):
            result = await client.call_tool("add", {"a": i, "b": 1})
            assert not result.is_error
    # The client is gone and so is the server process: every call it answered has its row.
    rows = await anyio.to_thread.run_sync(stored_ids, history)
    assert len(rows) == 20
