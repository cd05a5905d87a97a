"""The pytest plugin ``workbench.testing``, run by pytest's own ``pytester``: a passing receipt
snapshot, a changed receipt that fails with a readable diff, ``--wb-update``, normalised volatile
parts; and ``assert_resilient`` naming the case that went wrong."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import workbench as wb
from workbench.testing import NotResilient, assert_resilient, normalise_record, normalise_text

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]

CONFTEST = 'pytest_plugins = ["workbench.testing"]\n'
# this process imported workbench.testing already, so pytest cannot rewrite its asserts again
INI = "[pytest]\nfilterwarnings = ignore::pytest.PytestAssertRewriteWarning\n"

TEST_FILE = '''
import os
import tempfile
import time

import workbench as wb

tools = wb.Registry(history=":memory:")


@tools.tool
def greet(name: str) -> str:
    """Greet someone."""
    return os.environ.get("GREETING", "Hello") + ", " + name + "."


@tools.tool
def volatile() -> dict:
    """Everything that changes from run to run."""
    where = tempfile.mkdtemp()
    return {
        "where": where,
        "duration_ms": time.perf_counter_ns() % 1000,
        "note": "took %.3fs in %s" % (time.perf_counter() % 1, where),
    }


def test_greet(receipt_snapshot):
    envelope = receipt_snapshot(tools, "greet", {"name": "Ada"})
    assert envelope.status == "success"


def test_volatile(receipt_snapshot):
    receipt_snapshot(tools.invoke("volatile", {}))
    receipt_snapshot(tools, "volatile", {})
'''


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makeini(INI)
    pytester.makepyfile(test_receipts=TEST_FILE)
    return pytester


def snapshot(project: pytest.Pytester, name: str) -> Path:
    return project.path / "snapshots" / "test_receipts" / f"{name}.txt"


def test_a_missing_snapshot_fails_and_says_how_to_write_it(project):
    result = project.runpytest("-k", "greet")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*no receipt snapshot at *test_greet.txt; run pytest with --wb-update*"]
    )
    assert not snapshot(project, "test_greet").exists()


def test_update_writes_snapshots_that_then_pass(project):
    project.runpytest("--wb-update").assert_outcomes(passed=2)
    text = snapshot(project, "test_greet").read_text()
    assert text.startswith('tool: greet\narguments: {"name": "Ada"}\n--- receipt\nHello, Ada.\n')
    assert '"call_id": "call_<id>"' in text
    project.runpytest().assert_outcomes(passed=2)


def test_a_changed_receipt_fails_with_a_readable_diff_until_updated(project, monkeypatch):
    project.runpytest("--wb-update").assert_outcomes(passed=2)
    monkeypatch.setenv("GREETING", "Howdy")
    result = project.runpytest("-k", "greet")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*receipt snapshot test_greet.txt differs; run pytest with --wb-update to accept it",
            "*--- test_greet.txt (stored)",
            "*+++ this run",
            "*-Hello, Ada.",
            "*+Howdy, Ada.",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    project.runpytest("-k", "greet", "--wb-update").assert_outcomes(passed=1)
    assert "Howdy, Ada." in snapshot(project, "test_greet").read_text()
    project.runpytest("-k", "greet").assert_outcomes(passed=1)


def test_volatile_parts_are_normalised_so_reruns_match(project):
    project.runpytest("--wb-update", "-k", "volatile").assert_outcomes(passed=1)
    first = snapshot(project, "test_volatile").read_text()
    second = snapshot(project, "test_volatile-2").read_text()
    assert first == second
    assert '"duration_ms": "<volatile>"' in first
    assert '"where": "<tmp>"' in first
    assert "took <duration> in <tmp>" in first
    for _ in range(2):
        project.runpytest("-k", "volatile").assert_outcomes(passed=1)


def test_normalisers_replace_ids_times_and_temp_paths(tmp_path):
    text = f"call_0123abcd4567 at 2026-01-31T12:00:00Z took 12 ms in {tmp_path}/out.log"
    assert normalise_text(text, paths=[tmp_path]) == (
        "call_<id> at <timestamp> took <duration> in <tmp_path>/out.log"
    )
    record = {"result": {"pid": 4242, "elapsed_s": 0.2, "exit_code": 0, "time": None}}
    assert normalise_record(record) == {
        "result": {"pid": "<volatile>", "elapsed_s": "<volatile>", "exit_code": 0, "time": None}
    }
    assert normalise_text("wait 5s and 10 seconds") == "wait <duration> and 10 seconds"


def loose_registry() -> wb.Registry:
    tools = wb.Registry(history=":memory:")
    tools.register(
        lambda args: args,
        name="loose",
        description="Takes a number or a word.",
        input_schema={
            "type": "object",
            "properties": {"n": {"type": ["integer", "string"], "description": "A number."}},
            "required": ["n"],
            "additionalProperties": False,
        },
    )

    @tools.tool
    def count(n: int, step: int = 1) -> int:
        """Count.

        Args:
            n: Where to stop.
            step: Step size.
        """
        return n

    return tools


def test_assert_resilient_names_the_case_that_went_wrong():
    tools = loose_registry()
    with pytest.raises(NotResilient) as caught:
        assert_resilient(tools, "loose")
    message = str(caught.value)
    assert message.splitlines()[0].startswith("loose: 1 of ")
    assert "case `wrong_type:n` was accepted, expected refused" in message
    assert "fix: the schema accepts a value it should refuse" in message
    matrix = assert_resilient(tools, "loose", allow=["wrong_type:*"])
    assert "wrong_type:n" in set(matrix["case"])
    assert set(assert_resilient(tools, "count")["outcome"]) == {"accepted", "coerced", "refused"}


def test_assert_resilient_fails_inside_pytest_with_the_case_named(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makeini(INI)
    pytester.makepyfile(
        test_loose="""
        import workbench as wb
        from workbench.testing import assert_resilient

        def test_loose():
            tools = wb.Registry(history=":memory:")
            tools.register(
                lambda args: args,
                name="loose",
                description="d",
                input_schema={
                    "type": "object",
                    "properties": {"n": {"type": ["integer", "string"]}},
                    "required": ["n"],
                    "additionalProperties": False,
                },
            )
            assert_resilient(tools, "loose")
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*NotResilient: loose: 1 of *", "*case `wrong_type:n` was accepted*"]
    )


def test_the_plugin_is_registered_through_an_entry_point():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    entry_points = pyproject["project"]["entry-points"]["pytest11"]
    assert entry_points == {"workbench.testing": "workbench.testing"}
