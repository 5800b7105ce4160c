""":class:`~capvault.FsCap`'s file and folder methods: read, write, delete, move, stat, list."""

from __future__ import annotations

import os  # noqa: F401  resolves PathArg's "os.PathLike[str]" in this module's annotations
from typing import Any, Dict, Iterator, List, Optional, Tuple

from ._cap_url import _path
from ._errors import CapError
from ._transport import _VaultTransport, _json_object
from ._types import Entry, FileStat, PathArg, WriteData, WriteResult
from ._write_body import _guess_type, _quote_etag, _sized_stream


class _FileMethods(_VaultTransport):
    """The file and folder methods of :class:`~capvault.FsCap`."""

    # ------------------------------------------------------------------ files

    def read(self, path: PathArg) -> bytes:
        """The whole content of the file at ``path`` (needs ``read``).

        Example::

            data = fs.read("skills/hermes-fs-as-cap/SKILL.md")
            fs.read("../../../etc/passwd")   # CapError path_escapes
            fs.read("/etc/passwd")           # CapError absolute_path
        """
        _, _, body = self._request("GET", "file", query={"path": _path(path)})
        return body

    def read_text(self, path: PathArg, encoding: str = "utf-8", errors: str = "strict") -> str:
        """The file at ``path`` decoded as text.

        Example::

            fs.read_text("notes.md")
        """
        return self.read(path).decode(encoding, errors)

    def read_range(self, path: PathArg, start: int, end: Optional[int] = None) -> bytes:
        """Bytes ``[start, end)`` of a file, like ``data[start:end]``, fetched with an HTTP Range.

        A negative ``start`` with no ``end`` reads the last ``-start`` bytes.
        A range that selects no byte of the file raises ``range_not_satisfiable``.

        Example::

            fs.read_range("log.txt", 0, 100)    # the first 100 bytes
            fs.read_range("log.txt", -100)      # the last 100 bytes
        """
        if start < 0:
            if end is not None:
                raise ValueError("a suffix range (negative start) takes no end")
            spec = f"bytes=-{-start}"
        else:
            if end is not None and end <= start:
                raise ValueError("end must be greater than start")
            spec = f"bytes={start}-" if end is None else f"bytes={start}-{end - 1}"
        status, _, body = self._request(
            "GET", "file", query={"path": _path(path)}, headers={"Range": spec}, ok=(200, 206)
        )
        if status == 200:  # the server ignored the range; honour it here
            return body[start:end] if start >= 0 else body[start:]
        return body

    def write(
        self,
        path: PathArg,
        data: WriteData,
        content_type: Optional[str] = None,
        if_match: Optional[str] = None,
        if_none_match: Optional[str] = None,
    ) -> WriteResult:
        """Create or replace the file at ``path`` (needs ``write``). Folders appear as needed.

        ``data`` is bytes, a str (sent as UTF-8), or a binary file object (streamed;
        its length must be knowable). ``content_type`` defaults to a guess from the
        name, then ``text/plain; charset=utf-8`` for str and
        ``application/octet-stream`` for bytes. ``if_match=etag`` writes only over
        that version; ``if_none_match="*"`` writes only if nothing is there; a
        failed condition raises ``precondition_failed`` and writes nothing.

        Returns ``{"size", "etag", "sha256", "created"}``. ``if_match`` also takes
        ``"sha256:<hex>"`` of the bytes expected there, computed locally.

        Example::

            r = fs.write("a.txt", "v1")                       # r["created"] is True
            fs.write("a.txt", "v2", if_match=r["etag"])       # replaces only v1
            fs.write("a.txt", "v3", if_none_match="*")        # CapError precondition_failed
        """
        rel = _path(path)
        headers: Dict[str, str] = {}
        body: Any
        if isinstance(data, str):
            body = data.encode("utf-8")
            default_type = "text/plain; charset=utf-8"
            length = len(body)
        elif isinstance(data, (bytes, bytearray, memoryview)):
            body = bytes(data)
            default_type = "application/octet-stream"
            length = len(body)
        elif hasattr(data, "read"):
            body, length = _sized_stream(data)
            default_type = "application/octet-stream"
        else:
            raise TypeError("data must be bytes, str or a binary file object")
        headers["Content-Type"] = content_type or _guess_type(rel) or default_type
        headers["Content-Length"] = str(length)
        if if_match is not None:
            headers["If-Match"] = _quote_etag(if_match)
        if if_none_match is not None:
            headers["If-None-Match"] = if_none_match if if_none_match == "*" else _quote_etag(if_none_match)
        status, _, raw = self._request(
            "PUT", "file", query={"path": rel}, body=body, headers=headers, ok=(200, 201)
        )
        result = _json_object(raw)
        return {  # type: ignore[typeddict-item]
            "size": result.get("size"),
            "etag": result.get("etag"),
            "sha256": result.get("sha256"),
            "created": status == 201,
        }

    def delete(self, path: PathArg) -> None:
        """Delete the file at ``path`` (needs ``delete``). Directories are not deleted (``conflict``).

        Example::

            fs.delete("old.txt")
        """
        self._request("DELETE", "file", query={"path": _path(path)}, ok=(200, 204))

    def move(self, src: PathArg, dst: PathArg, overwrite: bool = False) -> Dict[str, Any]:
        """Move a file, or a folder of at most 20 entries, within this cap (needs ``write`` and ``delete``).

        An existing ``dst`` file raises ``conflict`` unless ``overwrite`` is True;
        a folder merges into an existing one (``conflict`` before anything moves
        if a file would land on a file) and answers ``{"moved": {"files", "folders"}}`` too.

        Example::

            fs.move("drafts/a.md", "published/a.md")
        """
        payload: Dict[str, Any] = {"from": _path(src), "to": _path(dst)}
        if overwrite:
            payload["overwrite"] = True
        _, _, raw = self._request("POST", "move", json_body=payload, ok=(200, 201, 204))
        return _json_object(raw) if raw else {}

    def stat(self, path: PathArg = "") -> FileStat:
        """What is at ``path`` (needs ``read`` or ``list``): a file's metadata or ``{"type": "dir"}``.

        Example::

            fs.stat("a.txt")   # {"type": "file", "size": 2, "etag": "...", "modified": "...", "contentType": "..."}
            fs.stat("")        # {"type": "dir"}
        """
        _, _, raw = self._request("GET", "stat", query={"path": _path(path)})
        return _json_object(raw)  # type: ignore[return-value]

    def exists(self, path: PathArg) -> bool:
        """True when something is at ``path``; False on ``not_found``. Other refusals still raise.

        Example::

            if not fs.exists("config.json"):
                fs.write("config.json", "{}")
        """
        try:
            self.stat(path)
        except CapError as e:
            if e.code == "not_found":
                return False
            raise
        return True

    # ------------------------------------------------------------------ listing

    def list_page(
        self,
        path: PathArg = "",
        cursor: Optional[str] = None,
        limit: Optional[int] = None,
        depth: Optional[int] = None,
    ) -> Tuple[List[Entry], Optional[str]]:
        """One page of the folder at ``path`` (needs ``list``): ``(entries, next_cursor)``.

        ``next_cursor`` is None on the last page. ``limit`` is 1..1000 (server default 1000).
        ``depth`` 1 (default) lists direct children; 0 every file below, named by its
        relative path (``a/b.txt``); N files down to N levels and deeper folders once.
        A page may hold fewer than ``limit`` entries and still have a next cursor.

        Example::

            entries, cursor = fs.list_page("notes", limit=100)
        """
        query: Dict[str, str] = {"path": _path(path)}
        if cursor is not None:
            query["cursor"] = cursor
        if limit is not None:
            query["limit"] = str(int(limit))
        if depth is not None:
            query["depth"] = str(int(depth))
        _, _, raw = self._request("GET", "list", query=query)
        page = _json_object(raw)
        entries = page.get("entries")
        if not isinstance(entries, list):
            raise CapError("bad_response", "listing without entries")
        next_cursor = page.get("cursor")
        if next_cursor is not None and not isinstance(next_cursor, str):
            raise CapError("bad_response", "listing cursor is not a string")
        return entries, next_cursor or None

    def iter_list(
        self, path: PathArg = "", page_size: Optional[int] = None, depth: Optional[int] = None
    ) -> Iterator[Entry]:
        """Every entry of the folder at ``path``, following the cursor page by page.

        Entries are the folder's direct children, sorted by the UTF-8 bytes of
        their names; a sub-folder appears once, as ``{"name", "type": "dir"}``.
        With ``depth`` (see :meth:`list_page`), the files below instead.

        Example::

            for entry in fs.iter_list("skills"):
                print(entry["type"], entry["name"])
        """
        rel = _path(path)
        cursor: Optional[str] = None
        seen_cursors = set()
        while True:
            entries, cursor = self.list_page(rel, cursor=cursor, limit=page_size, depth=depth)
            yield from entries
            if cursor is None:
                return
            if cursor in seen_cursors:  # a server bug must not become an endless loop
                raise CapError("bad_response", "listing cursor repeated")
            seen_cursors.add(cursor)

    def list(self, path: PathArg = "", page_size: Optional[int] = None, depth: Optional[int] = None) -> List[Entry]:
        """All entries of the folder at ``path`` (all pages), as a list. See :meth:`iter_list`.

        Example::

            names = [e["name"] for e in fs.list()]
        """
        return [entry for entry in self.iter_list(path, page_size=page_size, depth=depth)]
