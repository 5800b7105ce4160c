"""What the plugin's tools share: the cap behind each, and vault refusals in Hermes' words.

No tool here checks a path before using it. Hermes' ``validate_within_dir`` and
``has_traversal_component`` are gone: the vault judges every path at the call
and refuses ``..``, absolute paths and links out of the root itself. The only
thing left to do locally is to say the vault's refusal in the words Hermes'
tools and tests use, with the vault's code kept in the text.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Union

from ..client import CapError, FsCap
from ..hermes import HermesFs

CapLike = Union[FsCap, HermesFs]

# Hermes' own phrases for each refusal (tests look for "traversal", "relative
# path", "escapes"), followed by the vault's code so the model can tell why.
_REFUSAL_TEXT = {
    "path_escapes": "Path traversal ('..') is not allowed",
    "absolute_path": "Use a relative path: absolute paths do not exist here",
    "outside_root": "Path escapes the allowed directory boundary (a link leads outside it)",
    "invalid_path": "Invalid path",
    "not_found": "Not found",
    "forbidden": "This cap does not grant that",
    "precondition_failed": "The file changed while this call ran",
    "too_large": "Too large",
    "conflict": "Conflict",
}


def as_cap(cap: CapLike) -> FsCap:
    """The FsCap behind ``cap`` (an FsCap, or the existing HermesFs adapter)."""
    if isinstance(cap, HermesFs):
        return cap.cap
    if isinstance(cap, FsCap):
        return cap
    raise TypeError("needs an FsCap or a HermesFs")


def refusal_text(err: CapError, subject: str = "") -> str:
    """One line for the model: Hermes' phrase, the path it concerns, the vault's code."""
    phrase = _REFUSAL_TEXT.get(err.code, err.message or "Refused")
    where = f" ('{subject}')" if subject else ""
    return f"{phrase}{where} (refused by the vault: {err.code})."


def rel(path: Any) -> str:
    """A tool's path argument as the cap's relative path: ``.``/``./`` mean the root.

    Nothing is resolved or normalised beyond that: ``a/../b`` goes to the vault as written.
    """
    text = "" if path is None else str(path)
    if text in ("", ".", "./"):
        return ""
    while text.startswith("./"):
        text = text[2:]
    return text


def dumps(result: Dict[str, Any]) -> str:
    """Hermes' tools answer with a JSON string."""
    return json.dumps(result, ensure_ascii=False)
