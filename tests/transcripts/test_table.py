"""The one table of formats: ``detect``, ``format_named`` and reading by parts look only at it,
so a format is added by one entry; and a load finds a source's request and response objects
once, for detection and the reader alike."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest

import workbench as wb
from tests.transcripts.support import as_pairs
from workbench.transcripts import _formats, _source
from workbench.transcripts._formats import LOOKS, TABLE, FormatEntry, Probe
from workbench.transcripts._parsed import ImportedCall, Parsed
from workbench.transcripts._source import Opened

DATA = Path(__file__).parents[1] / "data" / "transcripts"


def test_the_table_names_every_format_once():
    names = [entry.name for entry in TABLE]
    assert tuple(names) == wb.transcripts.FORMATS == typing.get_args(wb.transcripts.Format)
    aliases = [alias for entry in TABLE for alias in entry.aliases]
    assert len(set(aliases)) == len(aliases) and not set(aliases) & set(names)
    ranks = [probe.rank for entry in TABLE for probe in entry.probes]
    assert len(set(ranks)) == len(ranks)
    assert all(probe.look in LOOKS for entry in TABLE for probe in entry.probes)
    assert all(entry.probes for entry in TABLE)


def test_every_alias_and_spelling_names_its_format():
    for entry in TABLE:
        for alias in (entry.name, *entry.aliases):
            assert _formats.format_named(alias) == entry.name
            assert _formats.format_named(f" {alias.upper().replace('_', '-')} ") == entry.name
    assert _formats.format_named("nope") is None


def _read_toy(opened: Opened) -> Parsed:
    """Calls of the toy format: ``{"toy": [{"tool", "args", "result"}, ...]}``."""
    calls = [
        ImportedCall(
            tool=call["tool"],
            model_call_id=f"toy-{index}",
            raw_args=call["args"],
            arguments=call["args"],
            where=f"toy {index}",
            receipt=call["result"],
        )
        for index, call in enumerate(opened.data["toy"])
    ]
    return Parsed(calls=calls, run_id="toy-run")


TOY = FormatEntry(
    "toy",
    _read_toy,
    by_parts=frozenset(),
    probes=(
        Probe(5, "input", lambda opened: isinstance(opened.data, dict) and "toy" in opened.data),
    ),
    aliases=("toy_format",),
)


def test_a_format_is_added_by_one_table_entry(monkeypatch: pytest.MonkeyPatch):
    run = {"toy": [{"tool": "search", "args": {"q": "x"}, "result": "found"}]}
    with pytest.raises(wb.transcripts.TranscriptError):
        wb.transcripts.detect_format(run)
    monkeypatch.setattr(_formats, "TABLE", (*TABLE, TOY))
    assert wb.transcripts.detect_format(run) == "toy"
    for format in (None, "toy", "Toy-Format"):
        history = wb.transcripts.load(run, format=format)
        assert history.format == "toy"
        assert [(row["tool"], row["receipt"]) for row in history.rows()] == [("search", "found")]
    # the formats before it are detected and read as before
    assert wb.transcripts.detect_format(DATA / "anthropic.json") == "anthropic"
    assert len(wb.transcripts.load(DATA / "openai_chat.json")) > 0


def test_a_probe_ranked_later_is_asked_only_after_the_others(monkeypatch: pytest.MonkeyPatch):
    late = FormatEntry("toy", _read_toy, frozenset(), (Probe(99, "message", lambda _: True),))
    monkeypatch.setattr(_formats, "TABLE", (*TABLE, late))
    assert wb.transcripts.detect_format(DATA / "openai_chat.json") == "openai_chat"
    assert wb.transcripts.detect_format([{"role": "user", "content": "hi"}]) == "toy"


def test_a_source_of_a_shape_its_reader_does_not_read_by_parts_is_read_whole(tmp_path: Path):
    text = (DATA / "openai_chat_pairs.jsonl").read_text(encoding="utf-8")
    pairs = [json.loads(line) for line in text.splitlines()]
    path = tmp_path / "pairs.json"
    path.write_text(json.dumps(pairs), encoding="utf-8")
    source = _source.open_source(path)
    assert source.shape == _source.LOG
    assert _formats.reads_by_parts("openai_chat", source)
    assert not _formats.reads_by_parts("mcp_jsonl", source)
    opened = Opened(source)
    assert opened.whole() is not opened and opened.whole().data == pairs
    assert source.shape == _source.WHOLE
    assert all(_formats.reads_by_parts(entry.name, source) for entry in TABLE)
    whole = Opened(source)
    assert whole.whole() is whole  # nothing more to read


def test_a_load_finds_the_request_and_response_objects_once(monkeypatch: pytest.MonkeyPatch):
    calls: list[object] = []
    found = _source.documents_of

    def counted(data, where=None):
        calls.append(data)
        return found(data, where)

    monkeypatch.setattr(_source, "documents_of", counted)
    run = json.loads((DATA / "openai_chat.json").read_text(encoding="utf-8"))
    for given in (run, as_pairs("openai_chat", run), run["messages"]):
        calls.clear()
        assert len(wb.transcripts.load(given)) > 0
        assert len(calls) == 1
