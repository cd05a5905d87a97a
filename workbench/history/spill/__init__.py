"""The spill: where a history's rows wait, in order, while SQLite will not take them (its write
lock held past the busy timeout, a full disk, a read-only file). One file per process, in one
line format, found and written by whoever opens the history next if its process ends first;
and the files the previous version left, written once and retired."""

from workbench.history.spill._file import Spill
from workbench.history.spill._format import MAGIC, Entry, Source, header, lines_of
from workbench.history.spill._legacy import Legacy, legacy
from workbench.history.spill._orphans import DAMAGED, Orphan, orphans
from workbench.history.spill._places import Refused, places, private_directory

__all__ = [
    "DAMAGED",
    "MAGIC",
    "Entry",
    "Legacy",
    "Orphan",
    "Refused",
    "Source",
    "Spill",
    "header",
    "legacy",
    "lines_of",
    "orphans",
    "places",
    "private_directory",
]
