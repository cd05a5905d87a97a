"""The packaging tests' one fresh environment (``support.py``): built once per run, in the one
process that runs these tests (``tests/conftest.py`` keeps them in one unit)."""

from __future__ import annotations

import pytest

from tests.packaging.support import FreshEnvironment, walk


@pytest.fixture(scope="session")
def fresh_environment(tmp_path_factory: pytest.TempPathFactory) -> FreshEnvironment:
    """The wheel built, installed alone, with the ``lab`` extra, and with Binder's postBuild,
    into one new virtual environment, and what each step showed."""
    return walk(tmp_path_factory.mktemp("fresh-environment"))
