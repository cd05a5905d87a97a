"""The journal's stand-in in the shared temporary directory: another user can plant names
there, so nothing planted is followed, written or replayed. The planting is real: a child
process drops to another uid (``nobody``) and creates the names in a sticky, world-writable
directory, as in ``/tmp``."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import workbench as wb
from workbench.history import HistoryWarning
from workbench.history._codec import STORED, keyed
from workbench.history._journal import Journal
from workbench.history._record import CallRecord

NOBODY = 65534


@pytest.fixture
def shared_tmp(tmp_path, monkeypatch) -> Iterator[Path]:
    """A directory like ``/tmp`` (sticky, anyone may create in it) as the temporary directory
    (pytest has placed ``tmp_path`` first, so its own directories stay where they were)."""
    assert os.geteuid() == 0, "planting as another user needs root: run the tests as root"
    shared = Path(tempfile.mkdtemp(prefix="wb-shared-", dir="/tmp"))
    os.chmod(shared, 0o1777)
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    yield shared
    shutil.rmtree(shared)


def as_nobody(plant: Callable[[], None]) -> None:
    """Run ``plant`` in a child process that is user ``nobody``; fail if it failed."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            plant()
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def row(tool: str) -> dict[str, object]:
    return dict(zip(STORED, keyed(CallRecord(tool=tool, status="success"))[1], strict=True))


def test_a_symlink_planted_at_the_stand_in_is_never_followed(shared_tmp, tmp_path):
    journal = Journal(tmp_path / "gone" / "history.sqlite")  # its directory does not exist
    private = journal.fallback.parent
    target = shared_tmp / "victim.txt"
    target.write_bytes(b"precious\n")
    os.chmod(target, 0o666)

    # Another user takes the private directory's name first: a symlink to a directory of theirs.
    def plant_directory_link() -> None:
        theirs = shared_tmp / "theirs"
        theirs.mkdir(mode=0o777)
        os.chmod(theirs, 0o777)
        (theirs / journal.fallback.name).symlink_to(target)
        private.symlink_to(theirs)

    as_nobody(plant_directory_link)
    with pytest.raises(OSError, match="the stand-in too"):
        journal.append([row("add")])
    assert target.read_bytes() == b"precious\n"

    # Another user's own directory at that name is refused the same way.
    private.unlink()

    def plant_directory() -> None:
        private.mkdir(mode=0o777)
        os.chmod(private, 0o777)

    as_nobody(plant_directory)
    with pytest.raises(OSError, match="not a private directory of this user"):
        journal.append([row("add")])
    assert list(private.iterdir()) == []

    # In this user's own directory, a symlink at the file's name is not followed either.
    os.rmdir(private)
    journal.append([row("first")])
    journal.fallback.unlink()
    journal.fallback.symlink_to(target)
    with pytest.raises(OSError, match="the stand-in too"):
        journal.append([row("add")])
    assert target.read_bytes() == b"precious\n"
    assert journal.read() == (
        [],
        [
            f"the stand-in journal {journal.fallback} was not read: "
            f"[Errno 40] Too many levels of symbolic links: "
            f"'{journal.fallback.name}'"
        ],
    )


def test_only_rows_this_user_wrote_are_replayed(shared_tmp, tmp_path):
    database = tmp_path / "later" / "history.sqlite"
    journal = Journal(database)
    mine = row("mine")
    assert journal.append([mine]) == journal.fallback  # the directory is missing: stand-in
    assert os.stat(journal.fallback.parent).st_mode & 0o777 == 0o700
    assert os.stat(journal.fallback).st_mode & 0o777 == 0o600

    # A row planted in the stand-in, and a row of ours altered: neither carries our signature.
    planted = row("rm -rf /")
    with journal.fallback.open("a") as handle:
        handle.write(forged_line(planted))
        altered = journal.fallback.read_text().splitlines()[1].replace('"mine"', '"evil"')
        handle.write(altered + "\n")

    database.parent.mkdir()
    history = wb.History(database)
    with pytest.warns(HistoryWarning, match="not written by this user"):
        stored = {stored_row["tool"] for stored_row in history.rows()}
    assert stored == {"mine"}
    refused = [p.message for p in history.problems if "not written by this user" in p.message]
    assert len(refused) == 2
    history.close()
    # The refused lines are kept aside for a person to read, never deleted or replayed again.
    assert not journal.fallback.exists()
    assert (journal.fallback.parent / (journal.fallback.name + ".unverified")).exists()


def test_a_stand_in_in_another_users_directory_is_not_replayed(shared_tmp, tmp_path):
    database = tmp_path / "history.sqlite"
    journal = Journal(database)
    planted = row("rm -rf /")

    def plant() -> None:
        journal.fallback.parent.mkdir(mode=0o700, exist_ok=True)
        journal.fallback.write_text(forged_line(planted))

    as_nobody(plant)
    history = wb.History(database)
    with pytest.warns(HistoryWarning, match="not a private directory of this user"):
        assert history.rows() == []
    assert any("not a private directory of this user" in p.message for p in history.problems)
    history.close()
    assert journal.fallback.parent.stat().st_uid == NOBODY  # left as it was, not ours to remove


def forged_line(planted: dict[str, object]) -> str:
    """A stand-in line as another user would write it: the row, with a signature guessed."""
    return json.dumps({"row": planted, "hmac": "0" * 64}) + "\n"
