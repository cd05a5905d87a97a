"""Zip bombs in an inspect_ai ``.eval``, built by the tests: a member of a megabyte that
inflates to a gibibyte, and one whose directory entry declares 1,000 bytes for the same
gibibyte. Each is listed as unreadable, the other samples are read, and the load, run in a
child under a memory cap, neither holds nor writes to disk more than a few megabytes for it."""

from __future__ import annotations

import json
import struct
import zipfile
from pathlib import Path

import pytest

import workbench as wb
from tests.transcripts.capped import MIB, load_in_child
from tests.transcripts.test_inspect_parts import HEADER, sample

BOMB = "samples/00001_epoch_2.json"
GIB = 1 << 30
TOLERATED = 64 * MIB
"""What the load may add to resident memory or write to files for a bomb: far below its size,
and what reading the two small samples beside it takes."""


def bomb_eval(path: Path) -> Path:
    """An ``.eval`` of two samples and, between them, a sample member of about 1 MB that
    inflates to 1 GiB (one long string of a single letter)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps(HEADER))
        archive.writestr("samples/00000_epoch_2.json", json.dumps(sample(0)))
        with archive.open(BOMB, "w") as member:
            member.write(b'{"id": "bomb", "epoch": 2, "input": "')
            chunk = b"a" * MIB
            for _ in range(GIB // MIB):
                member.write(chunk)
            member.write(b'", "messages": []}')
        archive.writestr("samples/00002_epoch_2.json", json.dumps(sample(2)))
    return path


def declaring(path: Path, member: str, size: int) -> Path:
    """``path`` with ``member``'s uncompressed size, in its local header and its directory
    entry, overwritten by ``size``: the bytes inflate as before, the archive says otherwise."""
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(member)
    struct.pack_into("<I", raw, info.header_offset + 22, size)
    entry = raw.find(b"PK\x01\x02" + raw[info.header_offset + 4 : info.header_offset + 10])
    while raw[entry + 46 : entry + 46 + len(member)] != member.encode():
        entry = raw.find(b"PK\x01\x02", entry + 4)
    struct.pack_into("<I", raw, entry + 24, size)
    path.write_bytes(bytes(raw))
    return path


@pytest.fixture(scope="module")
def bomb(tmp_path_factory) -> Path:
    return bomb_eval(tmp_path_factory.mktemp("bomb") / "bomb.eval")


def test_the_bomb_is_what_it_claims_to_be(bomb):
    with zipfile.ZipFile(bomb) as archive:
        info = archive.getinfo(BOMB)
    assert bomb.stat().st_size < 2 * MIB and info.file_size > GIB


def beside_the_bomb() -> wb.transcripts.TranscriptHistory:
    """The import of the two samples beside the bomb, alone."""
    with pytest.warns(wb.transcripts.TranscriptWarning):
        return wb.transcripts.load({**HEADER, "samples": [sample(0), sample(2)]})


def assert_bomb_listed_and_bounded(result: dict, problem: str) -> None:
    assert "escaped" not in result, result
    (listed,) = [item for item in result["unreadable"] if item.startswith(BOMB)]
    assert listed.startswith(f"{BOMB}: {problem}"), listed
    assert result["rows"] == len(beside_the_bomb())
    assert result["peak"] - result["before"] < TOLERATED, result["peak"]
    assert result["written"] < TOLERATED, result["written"]


def test_a_member_of_a_megabyte_that_inflates_to_a_gibibyte_is_not_inflated(bomb):
    with zipfile.ZipFile(bomb) as archive:
        info = archive.getinfo(BOMB)
    result = load_in_child(bomb)
    declared = f"declares {info.file_size:,} bytes from {info.compress_size:,} compressed"
    assert_bomb_listed_and_bounded(result, declared)


def test_a_member_that_declares_1000_bytes_is_read_no_further(bomb, tmp_path):
    liar = tmp_path / "liar.eval"
    liar.write_bytes(bomb.read_bytes())
    declaring(liar, BOMB, 1_000)
    result = load_in_child(liar)
    assert_bomb_listed_and_bounded(result, "damaged in the archive (Bad CRC-32")
