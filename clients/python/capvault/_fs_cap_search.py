""":class:`~capvault.FsCap`'s content search: a regular expression (RE2) over the files below a folder, page by page."""

from __future__ import annotations

import os  # noqa: F401  resolves PathArg's "os.PathLike[str]" in this module's annotations
from typing import Any, Dict, Iterator, Optional

from ._cap_url import _path
from ._errors import CapError
from ._transport import _VaultTransport, _json_object
from ._types import PathArg

SEARCH_MODES = ("lines", "count", "files")


class _SearchMethods(_VaultTransport):
    """The content-search methods of :class:`~capvault.FsCap`."""

    def search(
        self,
        pattern: str,
        path: PathArg = "",
        glob: Optional[str] = None,
        mode: str = "lines",
        context: int = 0,
        ignore_case: bool = False,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Dict[str, Any]:
        """One page of a content search below ``path`` (needs ``read`` and ``list``).

        ``pattern`` is RE2 syntax (no backreferences or lookaround: refused
        ``bad_request``). The page holds ``matches`` (mode ``lines``: rows of
        ``path``, ``line``, ``text``, ``match``), ``counts`` (``count``) or
        ``files`` (``files``), plus ``skipped`` (files not read: too large,
        binary, a line too long), ``scanned`` and ``cursor`` (None when done).

        Example::

            page = fs.search(r"TODO\\b", path="src", glob="*.py", context=1)
            for row in page["matches"]:
                print(f'{row["path"]}:{row["line"]}:{row["text"]}')
        """
        if mode not in SEARCH_MODES:
            raise ValueError(f"mode must be one of {SEARCH_MODES}")
        query: Dict[str, str] = {"pattern": pattern, "path": _path(path), "mode": mode}
        if glob:
            query["glob"] = glob
        if context:
            query["context"] = str(int(context))
        if ignore_case:
            query["ignoreCase"] = "true"
        if limit is not None:
            query["limit"] = str(int(limit))
        if cursor:
            query["cursor"] = cursor
        _, _, raw = self._request("GET", "search", query=query)
        page = _json_object(raw)
        if not isinstance(page.get("skipped"), list) or not isinstance(page.get(_FIELD[mode]), list):
            raise CapError("bad_response", "search answer without its lists")
        if page.get("cursor") is not None and not isinstance(page.get("cursor"), str):
            raise CapError("bad_response", "search cursor is not a string")
        return page

    def iter_search(self, pattern: str, path: PathArg = "", max_pages: int = 100, **options: Any) -> Iterator[Dict[str, Any]]:
        """Every page of a search, following the cursor, at most ``max_pages`` of them.

        Example::

            hits = [row for page in fs.iter_search("needle", mode="files") for row in page["files"]]
        """
        cursor: Optional[str] = None
        for _ in range(max_pages):
            page = self.search(pattern, path, cursor=cursor, **options)
            yield page
            cursor = page.get("cursor")
            if not cursor:
                return


_FIELD = {"lines": "matches", "count": "counts", "files": "files"}
