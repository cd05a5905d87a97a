"""Salvage: every row still readable in a damaged history file, read from its pages without
SQLite (which stops at the first page it cannot trust), checked, and copied into a new file."""

from workbench.history.salvage._btree import Counts, LooseRow, read_rows, wal_damage
from workbench.history.salvage._copy import SalvageReport, salvage_into

__all__ = ["Counts", "LooseRow", "SalvageReport", "read_rows", "salvage_into", "wal_damage"]
