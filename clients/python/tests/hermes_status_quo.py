"""The status quo the Hermes bisimulation compares against: Hermes' path guards plus ``open`` on a host folder.

A re-implementation of the behaviour of ``tools/path_security.py`` in the
NousResearch/hermes-agent repository (written from its docstrings and its unit
tests in ``tests/tools/test_path_security.py``; no code copied):

* ``validate_within_dir(path, root)``: both are resolved (symlinks and ``..``
  followed, missing parts allowed), and ``path`` must then lie under ``root``
  part by part (``Path.relative_to``, so ``root_evil`` is not under ``root``).
  Returns ``"Path escapes allowed directory: ..."`` or ``None``.
* ``has_traversal_component(s)``: a literal ``..`` among the path's parts.
* ``has_unsafe_path_chars(s)``: C0 controls, DEL, NEL, LS or PS.

:class:`StatusQuoFs` is a Hermes tool's file access built on them, the
pattern every caller follows: join, check, then open **by name**. Its
``between_check_and_open`` hook lets a test change the folder exactly in that
gap, deterministically, instead of racing a thread against it.
"""

from __future__ import annotations

import builtins
import os
from pathlib import Path, PurePath
from typing import IO, Any, Callable, List, Optional

# C0 controls, DEL, and the three Unicode line breaks Hermes refuses (NEL, LS, PS).
_UNSAFE = frozenset([chr(c) for c in range(0x20)] + ["\x7f", "\x85", "\u2028", "\u2029"])


def validate_within_dir(path: Path, root: Path) -> Optional[str]:
    """None when ``path`` resolves inside ``root``; else Hermes' error text."""
    try:
        resolved, resolved_root = path.resolve(), root.resolve()
        resolved.relative_to(resolved_root)  # raises ValueError when not a descendant (or root itself)
    except (ValueError, OSError) as exc:
        return f"Path escapes allowed directory: {exc}"
    return None


def has_traversal_component(path_str: str) -> bool:
    """True when one of the path's parts is exactly ``..`` (``bar..`` and ``...`` are names)."""
    return any(part == ".." for part in PurePath(path_str).parts)


def has_unsafe_path_chars(path_str: str) -> bool:
    """True when the path holds a control character or a line separator."""
    return any(ch in _UNSAFE for ch in path_str)


class Refused(Exception):
    """The status quo's guards said no (Hermes returns these as error strings)."""


class StatusQuoFs:
    """``open`` / ``listdir`` / narrower scope over a host folder, guarded the way Hermes guards them."""

    def __init__(self, root: Path, between_check_and_open: Optional[Callable[[], None]] = None) -> None:
        self.root = root
        self.between_check_and_open = between_check_and_open

    def _checked(self, rel: str) -> Path:
        if has_unsafe_path_chars(rel):
            raise Refused("Path contains control characters or line separators.")
        if has_traversal_component(rel):
            raise Refused("Path traversal ('..') is not allowed.")
        target = self.root / rel
        error = validate_within_dir(target, self.root)
        if error:
            raise Refused(error)
        # The gap every Hermes call site has: the check is over, the open is by name, later.
        if self.between_check_and_open is not None:
            self.between_check_and_open()
        return target

    def open(self, rel: str, mode: str = "r", encoding: str = "utf-8") -> IO[Any]:
        """``open(root / rel, mode)`` after the checks; writers first make the parent folders, as Hermes' do."""
        target = self._checked(rel)
        if mode[0] in "wx":
            target.parent.mkdir(parents=True, exist_ok=True)
        return builtins.open(target, mode, encoding=None if "b" in mode else encoding)

    def listdir(self, rel: str = "") -> List[str]:
        return os.listdir(self._checked(rel))

    def scoped(self, rel: str) -> "StatusQuoFs":
        """The sub-tool's narrower root: checked once, here, then used by name for every later call."""
        return StatusQuoFs(self._checked(rel))
