"""The pytest side: the ``--wb-update`` option and the ``receipt_snapshot`` fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.testing._snapshot import ReceiptSnapshot

SNAPSHOT_DIRECTORY = "snapshots"


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--wb-update``: write the receipt snapshots afresh instead of comparing with them."""
    group = parser.getgroup("workbench")
    group.addoption(
        "--wb-update",
        action="store_true",
        default=False,
        help="write workbench receipt snapshots instead of comparing with them",
    )


@pytest.fixture
def receipt_snapshot(request: pytest.FixtureRequest, tmp_path: Path) -> ReceiptSnapshot:
    """Compare a call's receipt and canonical record with
    ``snapshots/<test module>/<test name>.txt`` beside the test file."""
    test_file = Path(str(request.node.path))
    return ReceiptSnapshot(
        directory=test_file.parent / SNAPSHOT_DIRECTORY / test_file.stem,
        stem=request.node.name,
        update=bool(request.config.getoption("wb_update")),
        paths=(tmp_path,),
    )
