"""Spools: complete output kept byte for byte, in memory while small, in one artifact once large."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import workbench as wb
from workbench.output._artifacts import ArtifactSink, ArtifactStore
from workbench.output._spool import HEAD_KEPT, Spool

chunks = st.lists(st.binary(min_size=1, max_size=3_000), max_size=40)


def spool(tmp_path, **limits) -> tuple[Spool, ArtifactSink]:
    sink = ArtifactSink(ArtifactStore(tmp_path / "artifacts"), "call_test")
    return Spool(sink, "stdout.log", **limits), sink


def test_small_output_stays_in_memory_until_an_artifact_is_asked_for(tmp_path):
    out, sink = spool(tmp_path)
    out.write(b"hello\n")
    assert not out.spilled and len(sink) == 0
    assert out.read() == b"hello\n" and out.text() == "hello\n"
    index = out.artifact()
    assert sink.path(index).read_bytes() == b"hello\n"


def test_large_output_spills_once_and_the_file_is_adopted_not_copied(tmp_path):
    out, sink = spool(tmp_path, memory_limit=10, tail_limit=8)
    out.write(b"0123456789")
    assert not out.spilled
    out.write(b"abcdef")
    assert out.spilled and out.size == 16
    index = out.artifact()
    assert out.artifact() == index and len(sink) == 1
    assert sink.path(index).read_bytes() == b"0123456789abcdef"
    out.close()
    assert out.read() == b"0123456789abcdef"


@settings(max_examples=60, deadline=None)
@given(chunks, st.integers(0, 5_000), st.integers(0, 3_000))
def test_head_and_tail_match_the_whole_stream(tmp_path_factory, parts, head, tail):
    out, _sink = spool(tmp_path_factory.mktemp("s"), memory_limit=4_000, tail_limit=3_000)
    for part in parts:
        out.write(part)
    whole = b"".join(parts)
    assert out.read() == whole and out.size == len(whole)
    assert out.head(head) == whole[:head]
    assert out.tail(tail) == (whole[-tail:] if tail else b"")


def test_a_head_longer_than_the_kept_head_is_read_from_the_file(tmp_path):
    out, _sink = spool(tmp_path, memory_limit=1_000)
    data = bytes(range(256)) * (HEAD_KEPT // 128)
    out.write(data)
    assert out.spilled
    assert out.head(HEAD_KEPT + 10) == data[: HEAD_KEPT + 10]


def test_a_removed_artifact_directory_is_noticed_and_the_receipt_says_nothing_was_kept(tmp_path):
    import shutil

    tools = wb.Registry(history=tmp_path / "history.sqlite")
    removed = []

    @tools.tool
    def chatter():
        """Print a lot; its artifact directory disappears half way."""
        for index in range(40):
            if index == 30 and not removed:
                shutil.rmtree(tools.artifacts.root)
                removed.append(True)
            yield "z" * 65_536 + "\n"

    call = tools.invoke("chatter")
    envelope = call.wait(30)
    assert removed and envelope.ok
    assert any("only 0 kept" in warning and "removed" in warning for warning in envelope.warnings)
    assert "only 0 kept" in call.receipt
