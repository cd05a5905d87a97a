"""Studies of many runs: one Parquet dataset of every call, queried with DuckDB.

``wb.transcripts.load_many(paths_or_glob, out=..., client=None)`` imports many runs into one
Parquet dataset partitioned by run (a ``dask.distributed.Client`` spreads the files over a
cluster); ``wb.open_dataset(path)`` and ``history.sql(query)`` query with DuckDB. The packages
come with the ``study`` extra and are imported only when used; without them each of these
raises ``MissingExtra`` naming the extra.
"""

from workbench._extras import MissingExtra
from workbench.history import QueryError
from workbench.study._dataset import Dataset, open_dataset
from workbench.study._load_many import load_many, resolve_paths
from workbench.study._pages import DatasetPages

__all__ = [
    "Dataset",
    "DatasetPages",
    "MissingExtra",
    "QueryError",
    "load_many",
    "open_dataset",
    "resolve_paths",
]
