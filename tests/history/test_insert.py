"""No row ever replaces another: a row under an id another row holds is stored under a fresh id
of its own, said so in its warnings and to its writer; the same row written twice is kept once.
Two real processes write to one SQLite file, read back with a plain connection."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import workbench as wb


def stored(path: Path) -> list[tuple[str, str]]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return list(conn.execute("SELECT call_id, tool FROM calls ORDER BY seq"))


def test_a_row_under_an_id_another_process_already_stored_never_replaces_it(tmp_path):
    path = tmp_path / "history.sqlite"
    said = []
    for tool in ("first", "second"):
        code = textwrap.dedent(
            f"""
            import json, sys
            import workbench as wb
            history = wb.History(sys.argv[1])
            row = {{"call_id": "call_taken", "tool": {tool!r}, "receipt": {tool!r}}}
            print(json.dumps(history.record(row)))
            """
        )
        child = subprocess.run(
            [sys.executable, "-c", code, str(path)],
            capture_output=True,
            text=True,
            timeout=120,
            env=os.environ.copy(),
            check=False,
        )
        assert child.returncode == 0, child.stderr
        said.append(json.loads(child.stdout))
    rows = stored(path)
    assert len(rows) == 2  # 0 rows replaced
    assert rows[0] == ("call_taken", "first")  # the first row is left exactly as it was
    moved_id, tool = rows[1]
    assert tool == "second" and moved_id.startswith("call_taken~")
    assert said[0] is None
    assert said[1] is not None and moved_id in said[1] and "already taken" in said[1]
    history = wb.History(path)
    moved = history.get(moved_id)
    assert moved is not None and moved["receipt"] == "second"
    assert any("already taken" in warning for warning in moved["warnings"])
    assert not any("fails its check" in warning for warning in moved["warnings"])  # resealed
    assert history.get("call_taken")["receipt"] == "first"  # type: ignore[index]
    history.close()


def test_two_rows_under_one_id_in_one_batch_are_both_kept(tmp_path):
    path = tmp_path / "history.sqlite"
    history = wb.History(path)
    rows = [wb.history.CallRecord(call_id="call_twice", tool=name) for name in ("a", "b")]
    problem = history.write(rows)
    assert problem is not None and "call_twice~" in problem  # where the second row went
    assert [tool for _, tool in stored(path)] == ["a", "b"]
    assert [p.call_ids for p in history.problems] == [("call_twice",)]
    assert "already taken" in history.problems[0].message
    history.close()


def test_the_same_row_written_twice_is_kept_once(tmp_path):
    path = tmp_path / "history.sqlite"
    history = wb.History(path)
    record = wb.history.CallRecord(call_id="call_once", tool="t", receipt="r")
    assert history.record(record) is None
    assert history.record(record) is None  # a replay of a row already there: nothing happens
    assert stored(path) == [("call_once", "t")]
    assert history.problems == []
    history.close()


def test_rows_are_inserted_many_a_statement_in_order_within_any_limit_on_bound_values(tmp_path):
    """Rows go in by one ``INSERT`` of many rows at a time (the writer's thread then takes the
    interpreter lock back once a statement, not once a row), as many as this SQLite's limit on
    bound values allows: here 100 values, three rows of 27. Order and the taken-id rule hold
    across the statements' bounds."""
    from workbench.history.row import encode
    from workbench.history.store import SCHEMA, insert_rows

    with contextlib.closing(sqlite3.connect(tmp_path / "history.sqlite")) as conn:
        conn.executescript(SCHEMA)
        conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 100)
        records = [wb.history.CallRecord(call_id=f"call_{n}", tool=f"t{n}") for n in range(10)]
        records.append(wb.history.CallRecord(call_id="call_4", tool="again"))  # 4 is taken
        statements: list[str] = []
        conn.set_trace_callback(statements.append)
        taken = insert_rows(conn, [encode(record) for record in records])
        conn.set_trace_callback(None)
        conn.commit()
        rows = list(conn.execute("SELECT call_id, tool FROM calls ORDER BY seq"))
    inserts = [statement for statement in statements if statement.startswith("INSERT")]
    assert len(inserts) == 4 + 1  # 11 rows three at a time, then the taken row under its own id
    assert [tool for _, tool in rows] == [*(f"t{n}" for n in range(10)), "again"]
    assert rows[-1][0].startswith("call_4~") and list(taken) == [10]
