""":class:`~capvault.FsCap`'s whole-folder delete and line-ranged text reads (``DELETE /folder?recursive=true``, ``GET /lines``)."""

from __future__ import annotations

import os  # noqa: F401  resolves PathArg's "os.PathLike[str]" in this module's annotations
from typing import Any, Dict, Optional

from ._cap_url import _path
from ._transport import _VaultTransport, _json_object
from ._types import PathArg

#: Lines one :meth:`read_lines` call returns at most (the server's bound).
LINES_MAX = 2000


class _TreeMethods(_VaultTransport):
    """The folder-tree and line methods of :class:`~capvault.FsCap`."""

    def rmtree(self, path: PathArg) -> Dict[str, int]:
        """Delete a folder and everything below it (needs ``delete`` and ``list``), as ``shutil.rmtree``.

        At most 20 files and folders in one call: a bigger folder raises
        ``CapError("too_large")`` and nothing is deleted (delete its subfolders
        first). Each file is deleted, and kept in its history, as :meth:`delete` would.
        Answers ``{"files": n, "folders": m}``. The folder holding it stays.

        Example::

            fs.rmtree("skills/old-skill")   # {'files': 3, 'folders': 2}
        """
        _, _, raw = self._request("DELETE", "folder", query={"path": _path(path), "recursive": "true"})
        deleted = _json_object(raw).get("deleted")
        if not isinstance(deleted, dict):
            raise ValueError("the vault answered no deleted count")
        return {"files": int(deleted.get("files", 0)), "folders": int(deleted.get("folders", 0))}

    def remove_folder(self, path: PathArg) -> None:
        """Remove an empty folder (needs ``delete``): ``conflict`` while it holds anything, as ``os.rmdir``.

        Example::

            fs.remove_folder("notes/2026")
        """
        self._request("DELETE", "folder", query={"path": _path(path)}, ok=(204,))

    def read_lines(self, path: PathArg, offset: int = 1, limit: Optional[int] = None) -> Dict[str, Any]:
        """Lines ``offset`` (1-based) onward of a UTF-8 text file (needs ``read``), at most ``limit`` (up to 2,000) and 1 MiB.

        Answers ``{"lines": [...], "offset", "totalLines", "nextOffset", "size"}``:
        each line without its ``\\n`` (a ``\\r`` stays); ``nextOffset`` is where to
        read on, None at the end. Bytes that are not UTF-8 raise ``conflict``,
        an offset past the last line ``range_not_satisfiable``.

        Example::

            page = fs.read_lines("notes.md", offset=10, limit=5)
            print(page["totalLines"], page["lines"])
        """
        query = {"path": _path(path), "offset": str(int(offset))}
        if limit is not None:
            query["limit"] = str(int(limit))
        _, _, raw = self._request("GET", "lines", query=query)
        return _json_object(raw)
