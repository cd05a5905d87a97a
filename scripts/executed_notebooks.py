"""Execute every notebook of ``notebooks/`` the way a headless user would, for the docs site.

``python -m scripts.executed_notebooks DEST`` writes each notebook, executed by nbclient with its
default settings (widget state stored, as ``nbconvert --execute`` and papermill do), into
``DEST``. An executed copy is kept in ``.cache/notebooks/`` under a fingerprint of the notebook,
its data and the package's source, so the docs are rebuilt without running a notebook again
until one of those changed. Each run happens in a fresh copy of ``notebooks/``: nothing is
written beside the originals.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
CACHE = ROOT / ".cache" / "notebooks"
TIMEOUT_S = 300


def _files(folder: Path) -> Iterable[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def fingerprint(notebook: Path) -> str:
    """What the executed copy of ``notebook`` depends on: its text, the notebooks' data and
    the package's source."""
    digest = hashlib.sha256(notebook.read_bytes())
    for path in [*_files(NOTEBOOKS / "data"), *_files(ROOT / "workbench")]:
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def execute(notebook: Path) -> str:
    """``notebook`` run top to bottom with nbclient's defaults, in a copy of ``notebooks/``;
    the executed notebook's JSON."""
    import nbformat
    from nbclient import NotebookClient

    with tempfile.TemporaryDirectory(prefix="wb-docs-") as scratch:
        workdir = Path(scratch) / "notebooks"
        shutil.copytree(NOTEBOOKS, workdir, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        node = nbformat.read(workdir / notebook.name, as_version=4)
        client = NotebookClient(node, timeout=TIMEOUT_S, kernel_name="python3")
        client.execute(cwd=str(workdir))
        return str(nbformat.writes(node))


def executed(notebook: Path) -> Path:
    """The cached executed copy of ``notebook``, made now if it is missing or stale."""
    cached = CACHE / f"{notebook.stem}-{fingerprint(notebook)}.ipynb"
    if not cached.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        for stale in CACHE.glob(f"{notebook.stem}-*.ipynb"):
            stale.unlink()
        text = execute(notebook)
        partial = cached.with_suffix(".partial")
        partial.write_text(text, encoding="utf-8")
        partial.replace(cached)
    return cached


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m scripts.executed_notebooks DEST", file=sys.stderr)
        return 2
    dest = Path(argv[0])
    dest.mkdir(parents=True, exist_ok=True)
    for notebook in sorted(NOTEBOOKS.glob("*.ipynb")):
        print(f"docs: {notebook.name}", flush=True)
        shutil.copyfile(executed(notebook), dest / notebook.name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
