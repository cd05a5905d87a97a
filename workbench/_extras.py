"""Which extra brings an optional package, and the study's (DuckDB, pyarrow, Dask), imported
only when used."""

from __future__ import annotations

import importlib
from types import ModuleType

DISTRIBUTION = "tool-workbench"
"""The name workbench is installed by (``pip install tool-workbench``); it imports as
``workbench``."""


def install_hint(extra: str) -> str:
    """The command that installs workbench with ``extra``: ``pip install 'tool-workbench[lab]'``."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


EXTRA = "study"
INSTALL_HINT = install_hint(EXTRA)


class MissingExtra(ImportError):
    """A study feature was used without the packages of the ``study`` extra."""


def require(module: str, feature: str) -> ModuleType:
    """Import ``module`` for ``feature``, or raise ``MissingExtra`` naming the extra."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = (exc.name or module).split(".")[0]
        raise MissingExtra(
            f"{feature} needs the package {missing!r}, which comes with the "
            f"{EXTRA!r} extra: {INSTALL_HINT}",
            name=missing,
        ) from exc
