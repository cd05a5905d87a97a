"""The arguments as a model sent them, as a call's history row keeps them.

Up to ``RAW_ARGS_ROW_CHARS`` characters (of their JSON, or of the text a model sent) they are
kept in the row as they are. Past that, the row holds a bounded preview (``RAW_ARGS_PREVIEW``:
the first ``RAW_ARGS_PREVIEW_CHARS`` characters, the whole length, and the file) and the whole
value is kept in an artifact of the call, so a history with a huge refused call still reads
back in bounded memory, and a replay still sends exactly what the model sent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.history import plain_json

if TYPE_CHECKING:
    from workbench.runtime._call import Call

RAW_ARGS_ROW_CHARS = 16_384
RAW_ARGS_PREVIEW_CHARS = 2_000
RAW_ARGS_PREVIEW = "raw_args_preview"
"""The key of a preview in a row's ``raw_args``; beside it ``raw_args_chars``, ``raw_args_text``
(True when the model sent text) and ``raw_args_artifact`` (None when it could not be written)."""


def kept_raw_args(call: Call) -> tuple[Any, str | None]:
    """What the row keeps of ``call``'s arguments as sent, and a sentence for its warnings when
    that is a preview. Decided once per call: the artifact is written at most once."""
    sheet = call.sheet
    if sheet.asked.raw_args_kept is None:
        sheet.asked.raw_args_kept = _kept(call)
    return sheet.asked.raw_args_kept


def _kept(call: Call) -> tuple[Any, str | None]:
    raw = call.raw_args
    if raw is None or isinstance(raw, bool | int | float):
        return raw, None
    is_text = isinstance(raw, str)
    if is_text and len(raw) <= RAW_ARGS_ROW_CHARS:
        return raw, None
    # The JSON the row would hold (what has no JSON form already in its bounded, named form).
    text = raw if is_text else plain_json(raw, [], "raw_args")
    if len(text) <= RAW_ARGS_ROW_CHARS:
        return raw, None
    preview: dict[str, Any] = {
        RAW_ARGS_PREVIEW: text[:RAW_ARGS_PREVIEW_CHARS],
        "raw_args_chars": len(text),
        "raw_args_text": is_text,
        "raw_args_artifact": None,
    }
    store = call.sheet.output.sink.store
    try:
        path = store.new_path(call.id, "raw_args.txt" if is_text else "raw_args.json")
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
    except OSError as exc:
        return preview, (
            f"the arguments as sent ({len(text):,} characters) could not be kept whole "
            f"({exc.strerror or exc}); the row holds the first {RAW_ARGS_PREVIEW_CHARS:,}"
        )
    preview["raw_args_artifact"] = store.ref(path).path
    return preview, (
        f"the arguments as sent ({len(text):,} characters) are kept whole in "
        f"{preview['raw_args_artifact']}; the row holds the first {RAW_ARGS_PREVIEW_CHARS:,}"
    )


def sent_raw_args(stored: Any) -> Any:
    """The arguments exactly as sent, from what a row keeps of them: read whole from their
    artifact when the row holds a preview. Raises ``OSError`` when that file is gone."""
    if not isinstance(stored, dict) or RAW_ARGS_PREVIEW not in stored:
        return stored
    where = stored.get("raw_args_artifact")
    if not isinstance(where, str):
        raise FileNotFoundError(
            "the arguments as sent were too long for the row and could not be kept whole"
        )
    text = Path(where).read_text(encoding="utf-8", errors="surrogatepass")
    return text if stored.get("raw_args_text") else json.loads(text)
