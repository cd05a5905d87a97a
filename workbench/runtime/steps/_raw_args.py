"""The arguments of a call as its history row keeps them: as the model sent them (``raw_args``)
and as the tool ran with them (``arguments``).

Up to ``RAW_ARGS_ROW_CHARS`` characters (of their JSON, or of the text a model sent) each is
kept in the row as it is. Past that, the row holds a bounded preview (``RAW_ARGS_PREVIEW`` or
``ARGUMENTS_PREVIEW``: the first ``RAW_ARGS_PREVIEW_CHARS`` characters, the whole length, and
the file) and the whole value is kept in an artifact of the call, so a history with a huge
call still reads back in bounded memory, and a replay still sends exactly what the model sent.
The arguments a tool ran with share the artifact of those sent when they are the same.

The JSON of a huge value is written to its artifact piece by piece as the encoder made it,
never joined into one more copy: a call holding a value of N bytes peaks near 2N, not 5N.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench._json_text import json_pieces
from workbench.history import plain_json

if TYPE_CHECKING:
    from workbench.runtime.call import Call

RAW_ARGS_ROW_CHARS = 16_384
RAW_ARGS_PREVIEW_CHARS = 2_000
RAW_ARGS_PREVIEW = "raw_args_preview"
"""The key of a preview in a row's ``raw_args``; beside it ``raw_args_chars``, ``raw_args_text``
(True when the model sent text) and ``raw_args_artifact`` (None when it could not be written)."""
ARGUMENTS_PREVIEW = "arguments_preview"
"""The key of a preview in a row's ``arguments``; beside it ``arguments_chars`` and
``arguments_artifact``."""

_WRITE_SLICE = 1 << 20  # characters encoded and written at a time


def kept_raw_args(call: Call) -> tuple[Any, str | None]:
    """What the row keeps of ``call``'s arguments as sent, and a sentence for its warnings when
    that is a preview. Decided once per call: the artifact is written at most once."""
    asked = call.sheet.asked
    if asked.raw_args_kept is None:
        asked.raw_args_kept = _kept(call, call.raw_args, "raw_args")
    return asked.raw_args_kept


def kept_arguments(call: Call) -> tuple[Any, str | None]:
    """What the row keeps of the arguments ``call``'s tool ran with (them, or past
    ``RAW_ARGS_ROW_CHARS`` a preview: the arguments as sent's artifact when they are equal),
    and a sentence for its warnings when that is a preview of its own. Decided once for each
    value the arguments take (a person may edit them before allowing the call)."""
    asked = call.sheet.asked
    arguments = asked.arguments
    if asked.arguments_kept is None or asked.arguments_kept[0] is not arguments:
        raw, _ = kept_raw_args(call)
        previewed = isinstance(raw, dict) and RAW_ARGS_PREVIEW in raw
        kept: tuple[Any, str | None]
        if arguments != call.raw_args:
            kept = _kept(call, arguments, "arguments")
        elif previewed:
            kept = (_renamed(raw, "arguments"), None)
        else:  # the same as those sent, which fit the row: no second encoding to learn so
            kept = (arguments, None)
        asked.arguments_kept = (arguments, *kept)
    return asked.arguments_kept[1], asked.arguments_kept[2]


def _renamed(preview: dict[str, Any], name: str) -> dict[str, Any]:
    return {
        f"{name}_preview": preview[RAW_ARGS_PREVIEW],
        f"{name}_chars": preview["raw_args_chars"],
        f"{name}_artifact": preview["raw_args_artifact"],
    }


def _kept(call: Call, value: Any, name: str) -> tuple[Any, str | None]:
    if value is None or isinstance(value, bool | int | float):
        return value, None
    is_text = isinstance(value, str)
    if is_text and len(value) <= RAW_ARGS_ROW_CHARS:
        return value, None
    # The JSON the row would hold (what has no JSON form already in its bounded, named form).
    pieces = [value] if is_text else json_pieces(value)
    if pieces is None:
        pieces = [plain_json(value, [], name)]
    chars = sum(map(len, pieces))
    if chars <= RAW_ARGS_ROW_CHARS:
        return value, None
    preview: dict[str, Any] = {
        f"{name}_preview": _first(pieces, RAW_ARGS_PREVIEW_CHARS),
        f"{name}_chars": chars,
        **({"raw_args_text": is_text} if name == "raw_args" else {}),
        f"{name}_artifact": None,
    }
    what = "the arguments as sent" if name == "raw_args" else "the arguments the tool ran with"
    store = call.sheet.output.sink.store
    try:
        path = store.new_path(call.id, f"{name}.txt" if is_text else f"{name}.json")
        _write_pieces(path, pieces)
    except OSError as exc:
        return preview, (
            f"{what} ({chars:,} characters) could not be kept whole "
            f"({exc.strerror or exc}); the row holds the first {RAW_ARGS_PREVIEW_CHARS:,}"
        )
    preview[f"{name}_artifact"] = store.ref(path).path
    return preview, (
        f"{what} ({chars:,} characters) are kept whole in "
        f"{preview[f'{name}_artifact']}; the row holds the first {RAW_ARGS_PREVIEW_CHARS:,}"
    )


def _first(pieces: list[str], count: int) -> str:
    """The first ``count`` characters of the pieces joined, joining only what is needed."""
    taken: list[str] = []
    for piece in pieces:
        if count <= 0:
            break
        taken.append(piece[:count])
        count -= len(taken[-1])
    return "".join(taken)


def _write_pieces(path: Path, pieces: list[str]) -> None:
    """The pieces as UTF-8 in ``path``, a slice at a time (no whole encoded copy)."""
    with path.open("wb") as file:
        for piece in pieces:
            for start in range(0, len(piece), _WRITE_SLICE):
                file.write(piece[start : start + _WRITE_SLICE].encode("utf-8", "surrogatepass"))


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
