"""Many runs into one Parquet dataset, each file imported by ``wb.transcripts.load``.

Every file is one task that needs nothing from the others: it is read, its rows built as
records and written, a batch at a time, straight to its own partition ``run=<key>/`` (no history
between). Without a client the tasks run one after
another in this process; with a ``dask.distributed.Client`` they are Dask tasks, spread over
that cluster's workers (which must see the same ``out`` directory). Workbench schedules
nothing itself.
"""

from __future__ import annotations

import glob
import hashlib
import json
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence, Sized
from pathlib import Path
from typing import Any, Protocol

from workbench.history import CallRecord
from workbench.study._dataset import RUNS_FILE, Dataset, open_dataset
from workbench.study._parquet import run_key, write_batches
from workbench.study._record_rows import record_batches


class RunRecords(Protocol):
    """What a loader gives for one file: its format, its rows as records (built as they are
    asked for), the parts it could not import (complete once the records are consumed), and
    ``finish(calls)``, which gives the warnings an import of the file gives."""

    format: str

    @property
    def unreadable(self) -> Sized: ...

    def records(self) -> Iterator[CallRecord]: ...

    def finish(self, calls: int) -> None: ...


Loader = Callable[[Path, str | None], RunRecords]

_GLOB_CHARS = frozenset("*?[")


def resolve_paths(paths_or_glob: str | Path | Iterable[str | Path]) -> list[Path]:
    """The files to import: a glob pattern (``**`` reaches into subdirectories), a directory
    (its files, not hidden ones), one file, or a list of any of these. Raises
    ``FileNotFoundError`` naming what matched nothing. A path that is there and is no directory
    is taken even when it is no regular file (a FIFO, a device): its import then lists it with
    the error that says what it is, rather than leaving it out without a word."""
    items: Sequence[str | Path] = (
        [paths_or_glob] if isinstance(paths_or_glob, str | Path) else list(paths_or_glob)
    )
    found: list[Path] = []
    for item in items:
        text = str(item)
        if _GLOB_CHARS & set(text):
            # A pattern may be absolute, which Path.glob does not take.
            matched = [Path(name) for name in sorted(glob.glob(text, recursive=True))]  # noqa: PTH207
            matched = [path for path in matched if _not_a_directory(path)]
        elif Path(text).is_dir():
            matched = sorted(
                path
                for path in Path(text).iterdir()
                if _not_a_directory(path) and not path.name.startswith(".")
            )
        elif _not_a_directory(Path(text)):
            matched = [Path(text)]
        else:
            matched = []
        if not matched:
            raise FileNotFoundError(f"no transcript files match {text!r}")
        found += matched
    unique = list(dict.fromkeys(path.resolve() for path in found))
    return unique


def _not_a_directory(path: Path) -> bool:
    """True for a path that is there and is no directory (``stat`` only: a FIFO is not
    opened)."""
    return path.exists() and not path.is_dir()


def import_run(path: str, out: str, format: str | None = None, *, loader: Loader) -> dict[str, Any]:
    """Import one file with ``loader`` and write its partition of ``out`` straight from its
    records (no history between); returns what ``Dataset.runs`` lists for it. A file that
    cannot be read at all (a ``TranscriptError``, a ``ValueError``, or any other failure of its
    import, then named by its type) is listed with its ``error``, not raised, and its previous
    partition (if any) is left as it was, so one bad file never stops a study. (A Dask task:
    plain arguments, plain result.)"""
    source = Path(path)
    summary: dict[str, Any] = {
        "run": None,
        "source": str(source),
        "format": None,
        "calls": 0,
        "unreadable": 0,
        "error": None,
        "warnings": [],
    }
    key = run_key(source, hashlib.sha1(str(source).encode()).hexdigest())
    failed: list[BaseException] = []
    try:
        # Warnings (a partly unreadable file, say) go into the run's summary, where a study of
        # many files reads them, rather than scrolling past one by one (or in a Dask worker).
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run = _importing(lambda: loader(source, format), failed)
            rows = record_batches(_each(run.records(), failed))
            calls = write_batches(rows, Path(out) / f"run={key}", format=run.format, source=path)
            run.finish(calls)
    except Exception as exc:
        if not failed or exc is not failed[0]:
            raise  # a failure to write the partition, not of the file's import
        if isinstance(exc, OSError | ValueError):  # a TranscriptError among them
            summary["error"] = str(exc)
        else:  # a failure the loader does not name: listed, so the study goes on
            summary["error"] = f"{type(exc).__name__}: {exc}"
        return summary
    summary["warnings"] = [str(warning.message) for warning in caught]
    summary.update(run=key, format=run.format, calls=calls, unreadable=len(run.unreadable))
    return summary


def _importing(load: Callable[[], RunRecords], failed: list[BaseException]) -> RunRecords:
    try:
        return load()
    except Exception as exc:
        failed.append(exc)
        raise


def _each(records: Iterator[CallRecord], failed: list[BaseException]) -> Iterator[CallRecord]:
    """``records``, with a failure of the import itself (raised while reading them) kept in
    ``failed`` before it goes on up, so that it is told apart from a failure to write."""
    try:
        yield from records
    except Exception as exc:
        failed.append(exc)
        raise


def _remember(out: Path, summaries: list[dict[str, Any]]) -> None:
    listed = out / RUNS_FILE
    previous: list[dict[str, Any]] = []
    if listed.exists():
        try:
            loaded = json.loads(listed.read_text(encoding="utf-8"))
            previous = list(loaded) if isinstance(loaded, list) else []
        except ValueError:
            previous = []  # an unreadable list is rewritten from this import's runs
    sources = {summary["source"] for summary in summaries}
    kept = [item for item in previous if item.get("source") not in sources]
    partial = listed.with_name(f".{RUNS_FILE}.writing")
    partial.write_text(json.dumps([*kept, *summaries], indent=1), encoding="utf-8")
    partial.replace(listed)


def load_many(
    paths_or_glob: str | Path | Iterable[str | Path],
    *,
    out: str | Path,
    client: Any = None,
    format: str | None = None,
    loader: Loader,
) -> Dataset:
    """Import many runs into one Parquet dataset at ``out``, one partition per file.

    ``paths_or_glob``: a glob (``"runs/**/*.eval"``), a directory, a file or a list of them.
    Each file is imported with ``wb.transcripts.load`` (``format`` as there) and written to
    ``out/run=<file name>-<hash of its path>/``; importing a file again replaces its partition.
    ``client``: a ``dask.distributed.Client`` to spread the files over its cluster's workers
    (``out`` must be a directory every worker can write); None imports them here, one by one.

    Returns the dataset (``open_dataset(out)``); ``dataset.runs`` lists each file, with the
    ``error`` of a file that could not be read at all and the ``warnings`` its import gave.
    Raises ``FileNotFoundError`` when no file matches, and ``ValueError`` when no file could
    be read.
    """
    target = Path(out)
    where = str(target.resolve())
    # A pattern such as "study/**/*" must not read the dataset's own files back in.
    paths = [
        str(path)
        for path in resolve_paths(paths_or_glob)
        if Path(where) != path and Path(where) not in path.parents
    ]
    if not paths:
        raise FileNotFoundError(f"no transcript files outside {out} match {paths_or_glob!r}")
    target.mkdir(parents=True, exist_ok=True)
    if client is None:
        summaries = [import_run(path, where, format, loader=loader) for path in paths]
    else:
        if not hasattr(client, "map") or not hasattr(client, "gather"):
            raise TypeError(
                f"client must be a dask.distributed.Client, not {type(client).__name__}"
            )
        futures = client.map(import_run, paths, out=where, format=format, loader=loader, pure=False)
        summaries = list(client.gather(futures))
    _remember(target, summaries)
    if not any(summary["error"] is None for summary in summaries):
        failed = "; ".join(f"{item['source']}: {item['error']}" for item in summaries[:3])
        raise ValueError(f"none of the {len(summaries)} file(s) could be imported: {failed}")
    return open_dataset(target)
