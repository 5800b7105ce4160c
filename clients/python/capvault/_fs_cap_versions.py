""":class:`~capvault.FsCap`'s version methods: a file's history, reading, restoring and redacting one version."""

from __future__ import annotations

import os  # noqa: F401  resolves PathArg's "os.PathLike[str]" in this module's annotations
from typing import Any, Dict, Iterator, List, Optional, Tuple

from ._cap_url import _path, _quote_param
from ._errors import CapError
from ._transport import _VaultTransport, _json_object
from ._types import PathArg, Version


class _VersionMethods(_VaultTransport):
    """The version methods of :class:`~capvault.FsCap`."""

    # ------------------------------------------------------------------ versions

    def versions(
        self, path: PathArg, cursor: Optional[str] = None, limit: Optional[int] = None
    ) -> Tuple[List[Version], Optional[str]]:
        """One page of the file's versions, newest first (needs ``read``): ``(versions, next_cursor)``.

        Works for a deleted file: its newest version is the ``deleted`` one.
        ``limit`` is 1..100 (server default 100); ``next_cursor`` is None on the last page.

        Example::

            versions, cursor = fs.versions("notes/plan.md")
            print(versions[0]["operation"], versions[0]["id"])   # deleted 3
        """
        query: Dict[str, str] = {"path": _path(path)}
        if cursor is not None:
            query["cursor"] = cursor
        if limit is not None:
            query["limit"] = str(int(limit))
        _, _, raw = self._request("GET", "versions", query=query)
        page = _json_object(raw)
        versions = page.get("versions")
        if not isinstance(versions, list):
            raise CapError("bad_response", "versions answer without a list")
        next_cursor = page.get("cursor")
        if next_cursor is not None and not isinstance(next_cursor, str):
            raise CapError("bad_response", "versions cursor is not a string")
        return versions, next_cursor or None

    def iter_versions(self, path: PathArg) -> Iterator[Version]:
        """Every kept version of the file at ``path``, newest first, following the cursor.

        Example::

            old = next(v for v in fs.iter_versions("a.md") if v["operation"] != "deleted" and not v["redacted"])
        """
        rel = _path(path)
        cursor: Optional[str] = None
        seen_cursors = set()
        while True:
            versions, cursor = self.versions(rel, cursor=cursor)
            yield from versions
            if cursor is None:
                return
            if cursor in seen_cursors:  # a server bug must not become an endless loop
                raise CapError("bad_response", "versions cursor repeated")
            seen_cursors.add(cursor)

    def read_version(self, version_id: str) -> bytes:
        """The bytes of one version (needs ``read``). An id outside this cap raises ``not_found``.

        Example::

            fs.read_version(versions[1]["id"])   # b"v1"
        """
        _, _, body = self._request("GET", "versions/" + _quote_param(version_id))
        return body

    def restore(self, version_id: str) -> Dict[str, Any]:
        """Write a version's bytes back to its file, as a new version (needs ``read`` and ``write``): ``{size, etag, sha256}``.

        Example::

            fs.restore(deleted["id"])   # the deleted file is back
        """
        _, _, raw = self._request("POST", "versions/" + _quote_param(version_id) + "/restore")
        return _json_object(raw)

    def redact(self, version_id: str) -> None:
        """Destroy a version's bytes for good (needs ``delete``); its record stays, ``redacted: True``.

        Example::

            fs.redact(leaked["id"])
        """
        self._request("POST", "versions/" + _quote_param(version_id) + "/redact", ok=(204,))
