"""Reaching a provider's official SDK: imported only when a run asks for it, its key read from
the environment variable that provider's own SDK reads."""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from workbench._extras import install_hint
from workbench.models._types import MissingKey

LOCAL_KEY = "not-needed-for-a-local-server"
"""The key sent to a ``base_url`` server when no key is set: local OpenAI-compatible servers
(Ollama, vLLM, llama.cpp, LM Studio) and the scripted stand-in take any key."""


def sdk(module: str, extra: str) -> ModuleType:
    """The SDK module ``module``, or an ImportError naming the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            f"this provider needs the package {exc.name!r}: {install_hint(extra)}",
            name=exc.name,
        ) from exc


def api_key(
    given: str | None, variables: Sequence[str], provider: str, base_url: str | None
) -> str:
    """``given``, else the first of ``variables`` that is set; against a ``base_url`` without
    either, a placeholder (local servers take any key). Else ``MissingKey`` naming them."""
    if given:
        return given
    for name in variables:
        value = os.environ.get(name)
        if value:
            return value
    if base_url is not None:
        return LOCAL_KEY
    names = " or ".join(variables)
    raise MissingKey(
        f"{provider} needs an API key: set {names} in the environment, or pass api_key=... "
        "(a local OpenAI-compatible server needs none: pass base_url=...)"
    )


def plain(value: Any) -> Any:
    """An SDK object as plain JSON data (pydantic models dumped, ``None`` fields left out)."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", exclude_none=True)
    return value
