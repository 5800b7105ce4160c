"""Hermes-shaped file call sites on top of a cap.

Hermes' tools reach files with ``open(root / rel, ...)`` and ``os.listdir``,
each guarded by ``validate_within_dir`` (``tools/path_security.py``), and hand
a sub-tool a narrower root folder. :class:`HermesFs` keeps those call shapes
but holds a cap instead of a host path, following the translation table of the
hermes-fs-as-cap bridge:

==============================  ==========================================
Hermes call                     here
==============================  ==========================================
``open(root / rel, "r")``       ``hfs.open(rel, "r")``: one ``read`` of the cap
``open(root / rel, "w")``       ``hfs.open(rel, "w")``: one atomic ``write`` on close
``os.listdir(root / rel)``      ``hfs.listdir(rel)``: names, not paths
``validate_within_dir``         (deleted: the vault judges every path at the call)
sub-tool with narrower scope    ``hfs.scoped("skills")``: a child cap
==============================  ==========================================

There is no check-then-open gap to race: each call is one request, and the
vault checks containment at the same system call that opens the file.
Refusals raise :class:`~capvault.CapError` (``path_escapes``,
``absolute_path``, ``outside_root``, ``not_found``, ``conflict``, ...).

Example::

    from capvault import FsCap
    from capvault.hermes import HermesFs

    hfs = HermesFs(FsCap(os.environ["CAPVAULT_CAP"]))
    with hfs.open("notes/today.md", "w") as f:
        f.write("# Today\\n")
    print(hfs.listdir("notes"))                  # ['today.md']
    skill = hfs.scoped("skills", rights=["read", "list"])
    skill.open("../notes/today.md")              # CapError path_escapes
"""

from __future__ import annotations

import io
from typing import IO, Any, Callable, List, Optional, Sequence

from .client import FsCap, PathArg

__all__ = ["HermesFs", "SCOPED_TTL_SECONDS"]

#: How long a child minted by :meth:`HermesFs.scoped` lives unless told otherwise: an hour.
SCOPED_TTL_SECONDS = 3600

_READ_MODES = {"r", "rt", "rb"}
_WRITE_MODES = {"w", "wt", "wb", "x", "xt", "xb"}


class HermesFs:
    """``open`` / ``listdir`` / a narrower scope, all through one cap. See the module docstring.

    Args:
        cap: the cap every call goes through; its root is the only place this object can reach.
    """

    def __init__(self, cap: FsCap) -> None:
        if not isinstance(cap, FsCap):
            raise TypeError("HermesFs needs an FsCap")
        self._cap = cap

    @property
    def cap(self) -> FsCap:
        """The cap behind this object (its URL is a secret: hand it on deliberately)."""
        return self._cap

    def __repr__(self) -> str:
        return f"<HermesFs {self._cap!r}>"

    def open(
        self,
        path: PathArg,
        mode: str = "r",
        encoding: Optional[str] = "utf-8",
        errors: Optional[str] = None,
        newline: Optional[str] = None,
    ) -> IO[Any]:
        """Like the built-in ``open``, for whole-file reads and writes relative to the cap's root.

        ``"r"``/``"rb"`` read the file in one request, with ``open``'s text
        decoding and newline handling. ``"w"``/``"wb"`` buffer and write the
        whole file atomically when the file is closed; ``"x"`` writes only if
        nothing is there (``precondition_failed`` otherwise). A ``with`` block
        that raises writes nothing, so no partial file is ever seen. Appending
        and ``+`` modes are refused: the vault replaces files whole.

        Example::

            with hfs.open("SKILL.md") as f:
                text = f.read()
        """
        binary = "b" in mode
        if mode in _READ_MODES:
            data = self._cap.read(path)
            if binary:
                return io.BytesIO(data)
            return io.TextIOWrapper(io.BytesIO(data), encoding=encoding, errors=errors, newline=newline)
        if mode in _WRITE_MODES:
            exclusive = mode.startswith("x")

            def commit(data: bytes) -> None:
                self._cap.write(path, data, if_none_match="*" if exclusive else None)

            sink = _CommitOnClose(commit)
            if binary:
                return sink
            return _TextCommitOnClose(sink, encoding=encoding, errors=errors, newline=newline)
        raise ValueError(f"mode {mode!r} is not supported: use r, rb, w, wb, x or xb (files are replaced whole)")

    def listdir(self, path: PathArg = "") -> List[str]:
        """The names in the folder at ``path``, like ``os.listdir``, sorted by their UTF-8 bytes.

        Example::

            hfs.listdir("skills")   # ['hermes-fs-as-cap', 'other-skill']
        """
        return [entry["name"] for entry in self._cap.iter_list(path)]

    def scoped(
        self,
        path: PathArg,
        rights: Optional[Sequence[str]] = None,
        ttl_seconds: Optional[int] = SCOPED_TTL_SECONDS,
        label: Optional[str] = None,
    ) -> "HermesFs":
        """A narrower ``HermesFs`` for a sub-tool: a child cap rooted at ``path``, with at most ``rights``.

        Every call mints a new child, which expires after ``ttl_seconds``
        (default :data:`SCOPED_TTL_SECONDS`, an hour, never later than this
        cap): children minted per task do not pile up toward the vault's
        limit of children per cap. ``ttl_seconds=None`` asks for no lifetime
        of its own (as long as this cap).

        The name is judged like any path (``"../x"`` is ``path_escapes``), and
        the child can never reach above its root, even if that folder is later
        replaced by a symlink.

        Example::

            viewer = hfs.scoped("skills/my-skill", rights=["read", "list"], ttl_seconds=300)
        """
        return HermesFs(self._cap.subdir(path, rights=rights, ttl_seconds=ttl_seconds, label=label))


class _CommitOnClose(io.BytesIO):
    """Collects a file's bytes; ``close()`` hands them to the vault in one write.

    Leaving a ``with`` block by an exception discards them instead: the
    built-in ``open`` would leave a truncated or half-written file there.
    """

    def __init__(self, commit: Callable[[bytes], None]) -> None:
        super().__init__()
        self._commit: Optional[Callable[[bytes], None]] = commit

    def discard(self) -> None:
        self._commit = None

    def close(self) -> None:
        if self.closed:
            return
        data = self.getvalue()
        commit, self._commit = self._commit, None
        super().close()  # closed first: a failed write is not retried at garbage collection
        if commit is not None:
            commit(data)

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None:
            self.discard()
        self.close()


class _TextCommitOnClose(io.TextIOWrapper):
    """Text mode over :class:`_CommitOnClose`, with the same discard-on-exception rule."""

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None:
            self.buffer.discard()  # type: ignore[attr-defined]
        self.close()
