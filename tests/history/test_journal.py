"""The journal: fsync'd JSON lines beside the database, with a stand-in elsewhere."""

from __future__ import annotations

from workbench.history._journal import Journal


def test_a_torn_line_is_skipped_and_named_and_later_rows_are_kept(tmp_path):
    journal = Journal(tmp_path / "history.sqlite")
    journal.remove()
    assert journal.append([{"call_id": "a"}]) == journal.path
    with journal.path.open("ab") as handle:
        handle.write(b'{"call_id": "torn", "rec')  # a crash mid-append
    journal.append([{"call_id": "b"}, {"call_id": "c"}])
    rows, problems = journal.read()
    assert [row["call_id"] for row in rows] == ["a", "b", "c"]
    assert len(problems) == 1 and "not a whole row" in problems[0]
    journal.remove()
    assert not journal.exists() and journal.read() == ([], [])


def test_when_the_directory_refuses_the_stand_in_takes_the_rows(tmp_path):
    missing = tmp_path / "gone" / "history.sqlite"  # its directory does not exist
    journal = Journal(missing)
    journal.remove()
    where = journal.append([{"call_id": "a"}])
    assert where == journal.fallback and where.parent != missing.parent
    assert [row["call_id"] for row in journal.read()[0]] == ["a"]
    journal.remove()
    assert not journal.fallback.exists()
