"""An inspect_ai sample is read message by message, however large: every sample of a ``.json``
log, and an ``.eval`` member past ``LARGE_BYTES``, gives the rows, tools and unreadable parts
that reading the sample whole gives, and a huge sample's import takes a small share of its
size in memory."""

from __future__ import annotations

import codecs
import json
import os
import random
import subprocess
import tempfile
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

import pytest

import workbench as wb
import workbench.transcripts.inspect_ai as inspect_reader
from workbench.transcripts import TranscriptWarning
from workbench.transcripts._inspect_parts import LARGE_BYTES

HEADER = {"version": 2, "status": "success", "eval": {"eval_id": "parts-eval"}}
KEEP = (
    "call_id",
    "tool",
    "raw_args",
    "arguments",
    "receipt",
    "status",
    "kind",
    "run_id",
    "message_id",
    "started_at",
    "ended_at",
)


def stamp(second: int) -> str:
    return f"2026-11-27T10:00:{second:02d}+00:00"


def sample(number: int) -> dict[str, Any]:
    """A sample with every part the reader reads: calls (one with non-ASCII arguments), results
    by text, by content blocks, by attachment and as errors, an entry that is not a message, a
    result no call sent, tool events with times, and a model event with the tools."""
    call = f"s{number}_call"
    messages: list[Any] = [
        {"id": f"u{number}", "role": "user", "content": "Look at the café ☕ menu"},
        {
            "id": f"a{number}",
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": f"{call}_0", "function": "read_file", "arguments": {"path": "menü.txt"}},
                {"id": f"{call}_1", "function": "read_file", "arguments": {"path": "b.txt"}},
                {"id": f"{call}_2", "function": "grep", "arguments": {"pattern": "ключ"}},
            ],
        },
        {
            "id": f"t{number}_0",
            "role": "tool",
            "tool_call_id": f"{call}_0",
            "content": "attachment://ключ",
        },
        42,
        {
            "id": f"t{number}_1",
            "role": "tool",
            "tool_call_id": f"{call}_1",
            "content": [
                {"type": "text", "text": "attachment://plain"},
                {"type": "text", "text": " and more"},
            ],
        },
        {
            "id": f"t{number}_2",
            "role": "tool",
            "tool_call_id": f"{call}_2",
            "content": "",
            "error": {"type": "unknown", "message": "attachment://éscaped"},
        },
        {"id": f"t{number}_x", "role": "tool", "tool_call_id": "nobody", "content": "stray"},
        {
            "id": f"a{number}_last",
            "role": "assistant",
            "content": "done",
            "tool_calls": [
                {"id": f"{call}_3", "function": "read_file", "arguments": "{not json"},
            ],
        },
    ]
    events = [
        {
            "event": "model",
            "tools": [
                {
                    "name": "read_file",
                    "description": "Lit un fichier — vite",
                    "parameters": {
                        "type": "object",
                        "properties": {"path": {"type": "string"}},
                        "required": ["path"],
                    },
                },
                {
                    "name": "grep",
                    "parameters": {"type": "object", "properties": {"pattern": {"type": "string"}}},
                },
            ],
        },
        *(
            {"event": "tool", "id": f"{call}_{k}", "timestamp": stamp(k), "completed": stamp(k + 1)}
            for k in range(3)
        ),
    ]
    return {
        "id": f"sample-{number}",
        "epoch": 2,
        "input": "x" * 100,
        "messages": messages,
        "output": {"choices": [{"message": {"role": "assistant", "content": "done"}}]},
        "scores": {"match": {"value": "C"}},
        "events": events,
        "attachments": {
            "ключ": f"Меню {number}: кофе, чай ☕",
            "plain": "ascii text",
            "éscaped": "escaped key's text",
        },
    }


def write_json(
    path: Path, samples: list[Any], *, bom: bool = False, crlf: bool = False, escaped: bool = False
) -> Path:
    """The log as JSON text, its non-ASCII characters as UTF-8 or ``escaped`` (``\\u00e9``)."""
    text = json.dumps(
        {**HEADER, "samples": samples, "reductions": []}, indent=1, ensure_ascii=escaped
    )
    if crlf:
        text = text.replace("\n", "\r\n")
    path.write_bytes((codecs.BOM_UTF8 if bom else b"") + text.encode("utf-8"))
    return path


def write_eval(path: Path, members: dict[str, str], header: dict[str, Any] = HEADER) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps(header))
        for name, text in members.items():
            archive.writestr(name, text)
    return path


def whole(samples: list[Any]) -> Any:
    """The import of ``samples`` given as one object in memory: each sample read whole."""
    with pytest.warns(TranscriptWarning):
        return wb.transcripts.load({**HEADER, "samples": samples})


def eval_loaded(path: Path, *, by_parts: bool, monkeypatch) -> Any:
    """The import of an ``.eval`` log, every member read by parts or every one whole."""
    with monkeypatch.context() as patch:
        patch.setattr(inspect_reader, "LARGE_BYTES", 0 if by_parts else 1 << 62)
        with pytest.warns(TranscriptWarning):
            return wb.transcripts.load(path)


def assert_same(
    parts: Any, whole: Any, *, unreadable_prefix_only: bool = False, unread_after: int = 0
) -> None:
    """The same rows, tools and unreadable parts; ``parts`` names ``unread_after`` more last."""
    assert len(parts) == len(whole) > 0
    assert [{k: row[k] for k in KEEP} for row in parts.rows()] == [
        {k: row[k] for k in KEEP} for row in whole.rows()
    ]
    assert parts.tools == whole.tools
    named = [str(u) for u in parts.unreadable[: len(parts.unreadable) - unread_after]]
    if unreadable_prefix_only:  # where the text stops being JSON is named, in other words
        assert [u.split(":")[0] for u in named] == [str(u).split(":")[0] for u in whole.unreadable]
    else:
        assert named == [str(u) for u in whole.unreadable]


@pytest.mark.parametrize("written", ["utf-8", "escaped, with a BOM and CRLF line ends"])
def test_a_json_log_read_by_parts_gives_the_rows_of_its_samples_read_whole(tmp_path, written):
    plain = written == "utf-8"
    samples = [sample(0), "not a sample", sample(1)]
    path = write_json(
        tmp_path / "log.json", samples, bom=not plain, crlf=not plain, escaped=not plain
    )
    assert path.read_bytes().removeprefix(codecs.BOM_UTF8).isascii() is not plain
    with pytest.warns(TranscriptWarning):
        parts = wb.transcripts.load(path)
    assert_same(parts, whole(samples))
    rows = parts.rows()
    assert len(rows) == 8
    first = rows[0]
    assert first["receipt"] == "Меню 0: кофе, чай ☕"  # an attachment named by a non-ASCII key
    assert first["arguments"] == {"path": "menü.txt"}
    assert first["run_id"] == "parts-eval/sample-0/2"
    assert first["started_at"] is not None and first["ended_at"] - first["started_at"] == 1.0
    assert rows[1]["receipt"] == "ascii text\n and more"  # text blocks, one a line
    assert rows[2]["receipt"] == "Error: escaped key's text" and rows[2]["status"] == "error"
    assert rows[3]["receipt"] == "" and rows[3]["status"] is None  # the run ended before it
    assert parts.tools["read_file"]["properties"] == {"path": {"type": "string"}}
    reasons = [str(u) for u in parts.unreadable]
    assert "samples[0] message 3: expected a message object" in reasons
    assert "samples[1]: expected a sample object" in reasons
    assert any("'nobody'" in reason for reason in reasons)


def test_a_json_log_torn_mid_sample_keeps_the_samples_before(tmp_path):
    path = write_json(tmp_path / "torn.json", [sample(0), sample(1)])
    text = path.read_text(encoding="utf-8")
    cut = text.rindex('"attachments"')
    path.write_text(text[:cut] + '"attachments": {"k": nonsense', encoding="utf-8")
    with pytest.warns(TranscriptWarning):
        parts = wb.transcripts.load(path)
    assert_same(parts, whole([sample(0)]), unread_after=1)
    assert [str(u).split(":")[0] for u in parts.unreadable][-1] == "samples[1] onwards"
    assert {row["run_id"] for row in parts.rows()} == {"parts-eval/sample-0/2"}


def test_a_sample_whose_bytes_are_not_utf8_is_read_up_to_them(tmp_path):
    long_first = {**sample(0), "input": "a long prompt " * 20_000}  # past what detection reads
    path = write_json(tmp_path / "latin.json", [long_first, sample(1)])
    raw = path.read_bytes()
    at = raw.rindex("Меню 1".encode())  # an attachment the second sample's first result names
    path.write_bytes(raw[:at] + b"\xff" + raw[at + 1 :])
    with pytest.warns(TranscriptWarning):
        parts = wb.transcripts.load(path)
    assert {row["run_id"] for row in parts.rows()} == {
        "parts-eval/sample-0/2",
        "parts-eval/sample-1/2",
    }
    reasons = [str(u) for u in parts.unreadable]
    assert any(
        u.startswith("samples[1] onwards: could not be read back") and "utf-8" in u for u in reasons
    ), reasons


def test_an_eval_member_read_by_parts_gives_the_rows_read_whole(tmp_path, monkeypatch):
    members = {
        "samples/00000_epoch_2.json": json.dumps(sample(0), ensure_ascii=False),
        "samples/00001_epoch_2.json": "{not json",
        "samples/00002_epoch_2.json": json.dumps([1, 2]),
        "samples/00003_epoch_2.json": json.dumps(sample(3)) + " trailing",
        "samples/00004_epoch_2.json": json.dumps(sample(4)),
    }
    path = write_eval(tmp_path / "log.eval", members)
    parts = eval_loaded(path, by_parts=True, monkeypatch=monkeypatch)
    read_whole = eval_loaded(path, by_parts=False, monkeypatch=monkeypatch)
    assert_same(parts, read_whole, unreadable_prefix_only=True)
    assert {row["run_id"] for row in parts.rows()} == {
        "parts-eval/sample-0/2",
        "parts-eval/sample-4/2",
    }
    unreadable = [str(u) for u in parts.unreadable]
    assert any(u.startswith("samples/00001_epoch_2.json") and "not JSON" in u for u in unreadable)
    assert "samples/00002_epoch_2.json: expected a sample object" in unreadable
    assert any(u.startswith("samples/00003_epoch_2.json") and "not JSON" in u for u in unreadable)


def varied(chars: int, seed: int = 0) -> str:
    """``chars`` characters of text that compresses about as much as a real log's (hex of
    seeded random bytes), so that an archive holding it is no zip bomb."""
    return random.Random(seed).randbytes(chars // 2 + 1).hex()[:chars]


def huge_sample(calls: int, result_chars: int, size: int) -> dict[str, Any]:
    """One sample of ``calls`` calls, each answered by an attachment of ``result_chars``, made
    about ``size`` bytes long by what the model wrote beside its calls."""
    messages: list[Any] = []
    attachments = {}
    said = max(0, size - calls * result_chars) // calls
    for n in range(calls):
        call = {"id": f"c{n}", "function": "read_file", "arguments": {"path": f"{n}.txt"}}
        content = "thinking about the files, é " + varied(said, n)
        messages.append({"role": "assistant", "content": content, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": f"attachment://r{n}"})
        attachments[f"r{n}"] = (f"{n} é " * result_chars)[:result_chars]
    return {
        "id": "huge",
        "epoch": 1,
        "messages": messages,
        "events": [],
        "attachments": attachments,
    }


@pytest.mark.parametrize("suffix", [".json", ".eval"])
def test_one_sample_larger_than_memory_should_hold_is_read_in_a_fraction_of_its_size(
    tmp_path, suffix
):
    calls, result_chars = 300, 4_000
    the_sample = huge_sample(calls, result_chars, 5 * LARGE_BYTES)
    if suffix == ".json":
        path = write_json(tmp_path / "huge.json", [the_sample])
        size = path.stat().st_size
    else:
        text = json.dumps(the_sample, ensure_ascii=False)
        path = write_eval(tmp_path / "huge.eval", {"samples/00000_epoch_1.json": text})
        size = len(text.encode("utf-8"))
    assert size > LARGE_BYTES  # an .eval member read by parts with no setting changed
    del the_sample
    tracemalloc.start()
    try:
        history = wb.transcripts.load(path, history=tmp_path / "huge.sqlite")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    rows = history.rows()
    assert len(rows) == calls
    assert [row["receipt"][:4] for row in rows[:2]] == ["0 é ", "1 é "]
    assert all(len(row["receipt"]) == result_chars for row in rows)
    # Read whole, the sample alone takes more than its size; by parts, memory holds the rows
    # not yet written, one message, and a few dozen bytes a message.
    assert peak < size / 6, (peak, size)
    history.close()


def damage(path: Path, member: str) -> None:
    """Flip bytes inside ``member``'s compressed data, as a torn download or a bad disk might."""
    with zipfile.ZipFile(path) as archive:
        damage_at(path, archive.getinfo(member))


def damage_at(path: Path, info: zipfile.ZipInfo) -> None:
    raw = bytearray(path.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    for at in range(start + 20, start + 60):
        raw[at] ^= 0x55
    path.write_bytes(bytes(raw))


def the_middle_member_alone_unread(path: Path) -> str:
    """Of an .eval of three samples, the first and last are read: what is said of the middle."""
    with pytest.warns(TranscriptWarning):
        loaded = wb.transcripts.load(path)
    assert {row["run_id"] for row in loaded.rows()} == {
        "parts-eval/sample-0/2",
        "parts-eval/sample-2/2",
    }
    (said,) = [str(u) for u in loaded.unreadable if "00001" in str(u)]
    return said


@pytest.mark.parametrize("size", ["small", "past LARGE_BYTES"])
def test_a_damaged_eval_member_is_listed_and_the_others_are_read(tmp_path, size):
    padding = varied(LARGE_BYTES + 1) if size != "small" else ""
    members = {
        f"samples/0000{n}_epoch_2.json": json.dumps({**sample(n), "input": padding})
        for n in range(3)
    }
    path = write_eval(tmp_path / "damaged.eval", members)
    damage(path, "samples/00001_epoch_2.json")
    damaged = the_middle_member_alone_unread(path)
    assert damaged.startswith("samples/00001_epoch_2.json: damaged in the archive (")


@pytest.fixture
def full_temporary_directory(tmp_path, monkeypatch):
    """The temporary directory on a 1 MB tmpfs (tests run as root to mount it)."""
    assert os.geteuid() == 0, "this test mounts a tmpfs: run the tests as root"
    directory = tmp_path / "small-tmp"
    directory.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(directory)], check=True)
    monkeypatch.setattr(tempfile, "tempdir", str(directory))
    try:
        yield directory
    finally:
        subprocess.run(["umount", "-l", str(directory)], check=True)


def test_a_member_too_large_for_the_temporary_directory_is_listed(
    tmp_path, full_temporary_directory
):
    members = {
        "samples/00000_epoch_2.json": json.dumps(sample(0)),
        "samples/00001_epoch_2.json": json.dumps({**sample(1), "input": varied(LARGE_BYTES + 1)}),
        "samples/00002_epoch_2.json": json.dumps(sample(2)),
    }
    path = write_eval(tmp_path / "large.eval", members)
    uncopied = the_middle_member_alone_unread(path)
    assert "could not be copied to a temporary file (No space left on device)" in uncopied
    assert uncopied.endswith("set TMPDIR to a directory with room for it")
    assert list(full_temporary_directory.iterdir()) == []  # the partial copy is gone


def test_a_damaged_eval_header_is_a_clear_error(tmp_path):
    long_header = {**HEADER, "notes": "y" * 2_000}  # long enough to hold the damage
    members = {"samples/00000_epoch_2.json": json.dumps(sample(0))}
    path = write_eval(tmp_path / "header.eval", members, header=long_header)
    damage(path, "header.json")
    with pytest.raises(
        wb.transcripts.TranscriptError, match=r"header\.json: damaged in the archive"
    ):
        wb.transcripts.load(path)


def test_an_eval_whose_directory_points_before_the_file_is_a_clear_error(tmp_path):
    path = write_eval(
        tmp_path / "shifted.eval", {"samples/00000_epoch_2.json": json.dumps(sample(0))}
    )
    raw = bytearray(path.read_bytes())
    end = raw.rindex(b"PK\x05\x06")  # the end of the central directory
    offset = int.from_bytes(raw[end + 16 : end + 20], "little")
    raw[end + 16 : end + 20] = (offset + 100).to_bytes(4, "little")  # every member 100 bytes early
    path.write_bytes(bytes(raw))
    with pytest.raises(
        wb.transcripts.TranscriptError, match=r"header\.json: damaged in the archive"
    ):
        wb.transcripts.load(path)


def test_an_eval_member_flagged_as_strongly_encrypted_is_listed(tmp_path):
    members = {f"samples/0000{n}_epoch_2.json": json.dumps(sample(n)) for n in range(2)}
    path = write_eval(tmp_path / "flagged.eval", members)
    raw = bytearray(path.read_bytes())
    entry = raw.index(b"PK\x01\x02")  # the central directory's first entry
    while not raw[entry + 46 :].startswith(b"samples/00001_epoch_2.json"):
        entry = raw.index(b"PK\x01\x02", entry + 4)
    raw[entry + 8] |= 0x40  # general purpose flag bit 6: strong encryption, which zipfile refuses
    path.write_bytes(bytes(raw))
    with pytest.warns(TranscriptWarning):
        loaded = wb.transcripts.load(path)
    assert {row["run_id"] for row in loaded.rows()} == {"parts-eval/sample-0/2"}
    (flagged,) = [str(u) for u in loaded.unreadable if "00001" in str(u)]
    assert flagged.startswith(
        "samples/00001_epoch_2.json: damaged in the archive (strong encryption"
    )
