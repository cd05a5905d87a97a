"""Workbench in pytest: receipt snapshots and resilience as assertions.

Installed with workbench, this module is a pytest plugin (entry point ``workbench.testing``);
without the entry point, add ``pytest_plugins = ["workbench.testing"]`` to a ``conftest.py``.

``receipt_snapshot`` (fixture) runs a call and compares its receipt and canonical record with
``snapshots/<test module>/<test name>.txt`` beside the test; ids, durations, timestamps, pids and
temporary paths are normalised; a difference fails with a diff and ``pytest --wb-update``
rewrites the files::

    def test_greet(receipt_snapshot):
        receipt_snapshot(tools, "greet", {"name": "Ada"})

``assert_resilient(tools, name)`` turns the resilience matrix into a failure that names each
case the preflight got wrong.
"""

from workbench.testing._normalise import normalise_record, normalise_text
from workbench.testing._plugin import pytest_addoption, receipt_snapshot
from workbench.testing._resilient import NotResilient, assert_resilient
from workbench.testing._snapshot import ReceiptSnapshot, SnapshotMismatch, render

__all__ = [
    "NotResilient",
    "ReceiptSnapshot",
    "SnapshotMismatch",
    "assert_resilient",
    "normalise_record",
    "normalise_text",
    "pytest_addoption",
    "receipt_snapshot",
    "render",
]
