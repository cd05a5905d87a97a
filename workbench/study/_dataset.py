"""A Parquet dataset of many runs, queried with DuckDB without loading it.

``open_dataset(path)`` gives a ``Dataset``: ``sql(query)`` runs DuckDB over the Parquet files
(the table is ``calls``, one row per call, with a ``run`` column from the partition directory),
streaming them from disk, so a study of ten million calls fits in a laptop's memory as long as
the answer does; ``to_dataframe()`` reads the whole table (or the columns asked for) into pandas.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench._extras import require
from workbench.history import TABLE, connect, run_query

if TYPE_CHECKING:
    import pandas as pd

RUNS_FILE = "_runs.json"
"""The dataset's list of imported runs (source, format, calls, what could not be read)."""


class Dataset:
    """A directory of Parquet files, one partition ``run=<key>`` per imported run."""

    def __init__(self, path: str | Path, *, memory_limit: str | None = None) -> None:
        self.path = Path(path)
        self.memory_limit = memory_limit
        if not self.path.is_dir():
            raise FileNotFoundError(f"{self.path} is not a directory holding a Parquet dataset")
        if not self.files():
            raise FileNotFoundError(
                f"{self.path} holds no run=*/ Parquet files: write one with "
                "wb.transcripts.load_many(paths, out=...)"
            )

    def files(self) -> list[Path]:
        """The Parquet files of the dataset, one per run, sorted."""
        return sorted(self.path.glob("run=*/*.parquet"))

    @property
    def runs(self) -> list[dict[str, Any]]:
        """What each ``load_many`` recorded per run: ``run``, ``source``, ``format``, ``calls``,
        ``unreadable`` (how many parts could not be read), ``warnings`` (what its import said)
        and ``error`` (why a file could not be read at all, else None)."""
        listed = self.path / RUNS_FILE
        if not listed.exists():
            return []
        data = json.loads(listed.read_text(encoding="utf-8"))
        return list(data) if isinstance(data, list) else []

    def _connection(self) -> Any:
        conn = connect(self.memory_limit)
        pattern = str(self.path / "run=*" / "*.parquet").replace("'", "''")
        conn.execute(
            f"CREATE VIEW {TABLE} AS SELECT * FROM read_parquet('{pattern}', "
            "hive_partitioning = true, union_by_name = true)"
        )
        return conn

    def sql(self, query: str) -> pd.DataFrame:
        """Run DuckDB SQL over the table ``calls`` (every call of every run) and return the
        answer as a DataFrame. The Parquet files are streamed, never loaded whole."""
        conn = self._connection()
        try:
            return run_query(conn, query, str(self.path))
        finally:
            conn.close()

    def get(self, call_id: str) -> dict[str, Any] | None:
        """One call by its id, as a history row (``canonical``, ``arguments``, ``raw_args`` and
        ``warnings`` read back from their JSON text), or None."""
        conn = self._connection()
        try:
            cursor = conn.execute(f"SELECT * FROM {TABLE} WHERE call_id = ? LIMIT 1", [call_id])
            names = [column[0] for column in cursor.description]
            found = cursor.fetchone()
        finally:
            conn.close()
        if found is None:
            return None
        row = dict(zip(names, found, strict=True))
        for name in ("raw_args", "arguments", "canonical", "warnings"):
            text = row.get(name)
            if isinstance(text, str):
                try:
                    row[name] = json.loads(text)
                except ValueError:
                    row[name] = text  # kept as the text it is; the inspector shows it as such
        return row

    @property
    def problems(self) -> list[Any]:
        """Nothing goes wrong writing a dataset that is already written (the history view
        reads this beside a history's own problems)."""
        return []

    def to_dataframe(self, columns: list[str] | None = None) -> pd.DataFrame:
        """Every call as one DataFrame (only ``columns`` when given), runs in file order."""
        chosen = "*" if not columns else ", ".join(f'"{name}"' for name in columns)
        return self.sql(f"SELECT {chosen} FROM {TABLE}")

    def __len__(self) -> int:
        pq = require("pyarrow.parquet", "reading a Parquet dataset")
        return sum(pq.ParquetFile(str(path)).metadata.num_rows for path in self.files())

    def __repr__(self) -> str:
        return f"Dataset({str(self.path)!r}, {len(self.files())} run(s))"


def open_dataset(path: str | Path, *, memory_limit: str | None = None) -> Dataset:
    """The Parquet dataset at ``path`` (written by ``wb.transcripts.load_many``), queried with
    DuckDB: ``.sql(query)`` over the table ``calls``, ``.to_dataframe()``. ``memory_limit``
    (e.g. ``"500MB"``) caps DuckDB's memory; past it, DuckDB spills to disk."""
    return Dataset(path, memory_limit=memory_limit)
