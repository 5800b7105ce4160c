"""capvault: a stdlib-only Python client for a capvault capability.

A cap is a URL ``<origin>/object/<token>``. Holding it *is* the permission:
whoever has the URL can do what its rights allow, inside its root, and nothing
else. Paths are always relative to the cap's root and are judged by the vault,
never by this client, so there is no validate-then-open step here to get wrong.

Example::

    from capvault import FsCap, CapError

    fs = FsCap("http://127.0.0.1:8787/object/abcdefghijklmnopqrstuvwxyz234567abcdefghijklmnop")
    fs.write("notes/today.md", "# Today\\n")
    print(fs.read_text("notes/today.md"))
    skills = fs.subdir("skills", rights=["read", "list"])   # a read-only child cap
    try:
        fs.read("../../../etc/passwd")
    except CapError as e:
        assert e.code == "path_escapes"

Python 3.9+, no dependencies beyond the standard library.
"""

from __future__ import annotations

import http.client
import io
import json
import mimetypes
import os
import re
import stat
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import (
    IO,
    Any,
    Dict,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from ._events import MalformedStream, server_events

try:  # Python 3.8+ has TypedDict; keep the import local so the module stays importable everywhere.
    from typing import TypedDict
except ImportError:  # pragma: no cover
    TypedDict = dict  # type: ignore[misc,assignment]

__all__ = [
    "FsCap",
    "CapError",
    "Entry",
    "FileStat",
    "CapInfo",
    "ChildInfo",
    "WriteResult",
    "Version",
    "WatchEvent",
    "RIGHTS",
    "DEFAULT_TIMEOUT",
]

__version__ = "0.1.0"

#: The rights a cap can hold.
RIGHTS = ("read", "write", "delete", "list", "subdir")

#: Seconds to wait for the vault to connect and answer, per request.
DEFAULT_TIMEOUT = 30.0

PathArg = Union[str, "os.PathLike[str]"]
WriteData = Union[bytes, bytearray, memoryview, str, IO[bytes]]


class Entry(TypedDict, total=False):
    """One listing entry. ``size`` and ``modified`` are present for files only, ``etag`` for files when the cap has ``read``."""

    name: str
    type: str  # "file" or "dir"
    size: int
    etag: str  # unquoted md5 hex
    sha256: Optional[str]  # hex; None for an R2 file stored before hashes were kept
    modified: str  # ISO 8601


class FileStat(TypedDict, total=False):
    """``stat`` result: ``{"type": "dir"}`` or a file with its metadata (``etag`` only when the cap has ``read``)."""

    type: str
    size: int
    etag: str
    sha256: Optional[str]
    modified: str
    contentType: str


class CapInfo(TypedDict, total=False):
    """What a cap says about itself (``GET /object/<token>``). Never contains the token."""

    id: str
    rights: List[str]
    label: Optional[str]
    createdAt: str
    expiresAt: Optional[str]
    parent: Optional[str]


class ChildInfo(TypedDict, total=False):
    """A cap minted from this one by :meth:`FsCap.subdir`; ``path`` is relative to this cap."""

    id: str
    label: Optional[str]
    path: str
    rights: List[str]
    createdAt: str
    expiresAt: Optional[str]


class WriteResult(TypedDict):
    """``write`` result. ``created`` is True when the file did not exist before (HTTP 201)."""

    size: int
    etag: str
    sha256: str
    created: bool


class Version(TypedDict):
    """One version of a file, newest first in :meth:`FsCap.versions`. Never a token, never a path outside the cap."""

    id: str
    operation: str  # "created", "modified", "deleted" or "moved"
    at: str  # ISO 8601
    size: Optional[int]  # the bytes this version holds (for deleted and moved, those taken away)
    sha256: Optional[str]  # None once redacted
    actor: str  # the public id of the cap that made it
    redacted: bool  # True when its bytes are gone


class WatchEvent(TypedDict):
    """One change from :meth:`FsCap.watch`; ``path`` is relative to the watching cap."""

    path: str
    operation: str
    size: Optional[int]
    sha256: Optional[str]
    actor: str
    version: str  # pass as ``since`` to resume after this change


#: Seconds before reconnecting after a change stream that brought nothing, so a
#: stream the vault ends at once (a full root ends its oldest) is not a request loop.
_IDLE_RECONNECT_SECONDS = 1.0


class CapError(Exception):
    """A refusal from the vault, or a failure to reach it.

    ``code`` is the vault's wire code (``path_escapes``, ``absolute_path``,
    ``invalid_path``, ``outside_root``, ``forbidden``, ``no_such_cap``,
    ``not_found``, ``conflict``, ``precondition_failed``, ``too_large``,
    ``range_not_satisfiable``, ``bad_request``, ``unavailable``, ...).
    ``status`` is the HTTP status, or ``None`` when the request never got an
    answer. Two codes come from this client rather than the server:
    ``unavailable`` with ``status=None`` (network failure or timeout) and
    ``bad_response`` (the server answered something this client cannot read).

    The message never contains the cap's token.

    Example::

        try:
            fs.read("/etc/passwd")
        except CapError as e:
            print(e.code, e.status, e.message)   # absolute_path 400 absolute paths forbidden
    """

    def __init__(self, code: str, message: str, status: Optional[int] = None) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.status = status

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def __repr__(self) -> str:
        return f"CapError(code={self.code!r}, message={self.message!r}, status={self.status!r})"

    def __reduce__(self) -> Tuple[Any, ...]:
        return (CapError, (self.code, self.message, self.status))


# A token is lowercase base32 in the contract; accept any URL-safe token shape
# so a malformed one still reaches the server (which answers no_such_cap, the
# same as a revoked one) instead of being reshaped by the client.
_TOKEN_SHAPE = re.compile(r"^[A-Za-z0-9_-]+$")

# When the server sends no JSON error body, fall back to the code its status implies.
_STATUS_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    409: "conflict",
    411: "length_required",
    412: "precondition_failed",
    413: "too_large",
    416: "range_not_satisfiable",
    507: "quota_exceeded",
    503: "unavailable",
}


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    """The vault never redirects; following one would replay a cap request somewhere else."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        return None


def _quote_param(value: str) -> str:
    # %20 rather than "+" for spaces, and every reserved character escaped, so
    # that any query parser (URLSearchParams, Hono) decodes exactly the string
    # the caller gave, once.
    return urllib.parse.quote(value, safe="")


class FsCap:
    """A capability on a capvault folder.

    Every method sends the path exactly as given (in the query string or the
    JSON body, never in the URL path), so the vault's one parser judges it:
    ``fs.read("../x")`` raises ``CapError("path_escapes")`` from the server.

    ``repr(fs)`` and ``str(fs)`` hide the token; use :attr:`url` when you mean
    to hand the cap to someone.

    Args:
        url: the cap URL, ``<origin>/object/<token>``.
        timeout: seconds per request (connect and each read), default 30.
        context: an :class:`ssl.SSLContext` for https vaults with a private CA.
        user_agent: the ``User-Agent`` header to send.
        proxies: like :class:`urllib.request.ProxyHandler`; ``None`` (default) honours the
            ``*_proxy`` environment variables, ``{}`` disables proxies. A proxy sees cap URLs.

    Example::

        fs = FsCap(os.environ["CAPVAULT_CAP"], timeout=10)
        fs.write("a.txt", b"hello")
        assert fs.read("a.txt") == b"hello"
    """

    def __init__(
        self,
        url: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        context: Any = None,
        user_agent: Optional[str] = None,
        proxies: Optional[Mapping[str, str]] = None,
    ) -> None:
        if not isinstance(url, str):
            raise TypeError("cap URL must be a str")
        origin, token = _split_cap_url(url)
        self._origin = origin
        self._token = token
        self._timeout = float(timeout)
        self._context = context
        self._user_agent = user_agent or f"capvault-python/{__version__}"
        self._proxies = None if proxies is None else dict(proxies)
        handlers: List[Any] = [_RefuseRedirects()]
        if self._proxies is not None:
            handlers.append(urllib.request.ProxyHandler(self._proxies))
        if context is not None:
            handlers.append(urllib.request.HTTPSHandler(context=context))
        self._opener = urllib.request.build_opener(*handlers)
        #: When this cap was made by :meth:`subdir`: ``{"id", "rights", "expiresAt"}``; else ``None``.
        self.minted: Optional[Dict[str, Any]] = None

    # ------------------------------------------------------------------ identity

    @property
    def url(self) -> str:
        """The secret cap URL. Anyone holding it holds the cap: share it deliberately.

        Example::

            sub = fs.subdir("drafts", rights=["read", "list"])
            hand_to_subagent(sub.url)
        """
        return f"{self._origin}/object/{self._token}"

    @property
    def timeout(self) -> float:
        """Seconds per request."""
        return self._timeout

    def __repr__(self) -> str:
        extra = ""
        if self.minted is not None:
            extra = f" id={self.minted.get('id')!r} rights={self.minted.get('rights')!r}"
        return f"<FsCap {self._origin}/object/***{extra}>"

    __str__ = __repr__

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
        """Move a file within this cap (needs ``write`` and ``delete``).

        An existing ``dst`` raises ``conflict`` unless ``overwrite`` is True.

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
        """Write a version's bytes back to its file, as a new version (needs ``write``): ``{size, etag, sha256}``.

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

    def watch(self, since: Optional[str] = None, timeout: Optional[float] = None) -> Iterator[WatchEvent]:
        """The changes inside this cap's subtree as they are committed (needs ``read``), as a generator.

        First the changes after version ``since`` (when given), then live ones,
        reconnecting by itself when the vault ends a stream to be resumed.
        When the cap is revoked or expires, raises the vault's ``CapError``
        (``no_such_cap``). ``timeout`` is the seconds to wait for the next
        event (default: for ever); it then raises ``unavailable``. Close the
        generator (or leave the ``for`` loop) to stop.

        Example::

            for change in fs.watch(since=last_seen):
                print(change["version"], change["operation"], change["path"])
        """
        last = since
        while True:
            response = self._open_stream("watch", {"since": last} if last else None, timeout)
            delivered = False
            failure: Optional[CapError] = None
            try:
                for event, data in server_events(response):
                    if event == "resume":
                        resume_at = _version_id(_json_value(data).get("since"))
                        delivered = delivered or resume_at != last
                        last = resume_at
                    elif event is None:
                        change = _json_value(data)
                        last = _version_id(change.get("version"))
                        delivered = True
                        yield change  # type: ignore[misc]
            except MalformedStream as e:
                failure = CapError("bad_response", str(e))
            except (OSError, http.client.HTTPException) as e:
                failure = CapError("unavailable", self._scrub(f"the change stream broke off: {_describe(e)}"))
            finally:
                response.close()
            if failure is not None:  # raised here, so it carries no context that could hold the URL
                raise failure
            self.info()  # a revoked or expired cap raises its no_such_cap here
            if not delivered:
                time.sleep(_IDLE_RECONNECT_SECONDS)

    # ------------------------------------------------------------------ delegation

    def subdir(
        self,
        path: PathArg = "",
        rights: Optional[Sequence[str]] = None,
        ttl_seconds: Optional[int] = None,
        label: Optional[str] = None,
        max_bytes: Optional[int] = None,
        max_files: Optional[int] = None,
    ) -> "FsCap":
        """Mint a child cap rooted at ``path`` (needs ``subdir``).

        ``rights`` must be a subset of this cap's (default: all of them);
        ``path=""`` keeps the same root, for pure attenuation. The child expires
        no later than this cap. ``max_bytes``/``max_files`` set the child's own
        quota, never looser than this cap's (a write past it raises
        ``quota_exceeded``). The child talks to the same origin as this one;
        ``child.minted`` holds ``{"id", "rights", "expiresAt"}``.

        Example::

            skills = fs.subdir("skills", rights=["read", "list"], ttl_seconds=3600, label="skill_view")
            skills.read("hermes-fs-as-cap/SKILL.md")
            skills.write("x", b"")        # CapError forbidden
        """
        payload: Dict[str, Any] = {"path": _path(path)}
        if rights is not None:
            payload["rights"] = [rights] if isinstance(rights, str) else list(rights)
        if ttl_seconds is not None:
            payload["ttlSeconds"] = ttl_seconds
        if label is not None:
            payload["label"] = label
        if max_bytes is not None:
            payload["maxBytes"] = max_bytes
        if max_files is not None:
            payload["maxFiles"] = max_files
        _, _, raw = self._request("POST", "subdir", json_body=payload, ok=(200, 201))
        minted = _json_object(raw)
        token = minted.get("token")
        if not isinstance(token, str) or not _TOKEN_SHAPE.match(token):
            raise CapError("bad_response", "subdir answer without a usable token")
        child = FsCap(
            f"{self._origin}/object/{token}",
            timeout=self._timeout,
            context=self._context,
            user_agent=self._user_agent,
            proxies=self._proxies,
        )
        child.minted = {k: minted.get(k) for k in ("id", "rights", "expiresAt")}
        return child

    def children(self) -> List[ChildInfo]:
        """The caps minted directly from this one (needs ``subdir``), every page of them. Ids only, never tokens.

        Example::

            for child in fs.children():
                print(child["id"], child["path"], child["rights"])
        """
        children: List[ChildInfo] = []
        cursor: Optional[str] = None
        while True:
            _, _, raw = self._request("GET", "children", query={"cursor": cursor} if cursor else None)
            page = _json_object(raw)
            entries = page.get("children")
            if not isinstance(entries, list):
                raise CapError("bad_response", "children answer without a list")
            children.extend(entries)
            cursor = page.get("cursor")
            if not isinstance(cursor, str) or not cursor:
                return children

    def revoke_child(self, child_id: str) -> None:
        """Revoke the child cap with this id and everything minted from it (needs ``subdir``).

        Example::

            fs.revoke_child(sub.minted["id"])
        """
        self._request("DELETE", "children/" + _quote_param(child_id), ok=(200, 202, 204))

    def revoke(self) -> Dict[str, Any]:
        """Revoke this cap and every cap derived from it. Files are untouched.

        Returns ``{}`` when the whole cascade is done, or the server's JSON when
        it answered 202 (part of the cascade is still being finished).
        Afterwards every request with this cap raises ``no_such_cap``.

        Example::

            sub.revoke()
            sub.read("a.txt")   # CapError no_such_cap
        """
        status, _, raw = self._request("DELETE", None, ok=(200, 202, 204))
        if status == 204 or not raw:
            return {}
        return _json_object(raw)

    def info(self) -> CapInfo:
        """This cap's public description: ``{id, rights, label, createdAt, expiresAt, parent}``.

        Example::

            fs.info()["rights"]   # ["read", "write", "delete", "list", "subdir"]
        """
        _, _, raw = self._request("GET", None)
        return _json_object(raw)  # type: ignore[return-value]

    # ------------------------------------------------------------------ transport

    def _request(
        self,
        method: str,
        endpoint: Optional[str],
        *,
        query: Optional[Mapping[str, str]] = None,
        body: Any = None,
        json_body: Any = None,
        headers: Optional[Mapping[str, str]] = None,
        ok: Sequence[int] = (200,),
    ) -> Tuple[int, Mapping[str, str], bytes]:
        url = f"{self._origin}/object/{self._token}"
        if endpoint:
            url += "/" + endpoint
        if query:
            url += "?" + urllib.parse.urlencode(query, quote_via=urllib.parse.quote, safe="")
        all_headers = {"User-Agent": self._user_agent, "Accept": "application/json, */*"}
        if json_body is not None:
            body = json.dumps(json_body).encode("utf-8")
            all_headers["Content-Type"] = "application/json"
            all_headers["Content-Length"] = str(len(body))
        if headers:
            all_headers.update(headers)
        if body is None and method in ("PUT", "POST"):
            body = b""
            all_headers.setdefault("Content-Length", "0")
        request = urllib.request.Request(url, data=body, headers=all_headers, method=method)

        # The failure is raised *after* the except blocks so that the
        # exception carries no __context__: urllib's HTTPError holds the full
        # URL (the token) in .url/.filename, and error reporters walk context.
        failure: Optional[CapError] = None
        status = 0
        response_headers: Mapping[str, str] = {}
        data = b""
        try:
            with self._opener.open(request, timeout=self._timeout) as response:
                status = response.status
                response_headers = dict(response.headers.items())
                data = response.read()
        except (OSError, http.client.HTTPException) as e:
            failure = self._failure_of(e)
        if failure is not None:
            raise failure
        if status not in ok:
            raise CapError("bad_response", f"unexpected HTTP status {status}", status)
        return status, response_headers, data

    def _failure_of(self, e: BaseException) -> CapError:
        """The CapError for a request that failed: the vault's refusal (an HTTP error), or ``unavailable``."""
        if isinstance(e, urllib.error.HTTPError):
            try:
                error_body = e.read()
            except Exception:
                error_body = b""
            finally:
                e.close()
            return self._error_from(e.code, error_body)
        reason = e.reason if isinstance(e, urllib.error.URLError) else e
        return CapError("unavailable", self._scrub(f"could not reach the vault: {_describe(reason)}"))

    def _open_stream(self, endpoint: str, query: Optional[Mapping[str, str]], timeout: Optional[float]) -> Any:
        """An open streaming response (the caller closes it); refusals raise as in :meth:`_request`."""
        url = f"{self._origin}/object/{self._token}/{endpoint}"
        if query:
            url += "?" + urllib.parse.urlencode(query, quote_via=urllib.parse.quote, safe="")
        headers = {"User-Agent": self._user_agent, "Accept": "text/event-stream"}
        request = urllib.request.Request(url, headers=headers, method="GET")
        failure: Optional[CapError] = None
        try:
            response = self._opener.open(request, timeout=timeout)
        except (OSError, http.client.HTTPException) as e:
            failure = self._failure_of(e)
        if failure is not None:
            raise failure
        if response.status != 200:
            response.close()
            raise CapError("bad_response", f"unexpected HTTP status {response.status}", response.status)
        return response

    def _error_from(self, status: int, raw: bytes) -> CapError:
        code: Optional[str] = None
        message: Optional[str] = None
        try:
            parsed = json.loads(raw.decode("utf-8")) if raw else None
            err = parsed.get("error") if isinstance(parsed, dict) else None
            if isinstance(err, dict):
                if isinstance(err.get("code"), str):
                    code = err["code"]
                if isinstance(err.get("message"), str):
                    message = err["message"]
        except (ValueError, UnicodeDecodeError):
            pass
        if code is None:
            code = _STATUS_CODES.get(status) or ("unavailable" if status >= 500 else "bad_response")
        return CapError(self._scrub(code), self._scrub(message or f"HTTP {status}"), status)

    def _scrub(self, text: str) -> str:
        # Belt and braces: nothing this client raises may carry the token,
        # even if a server or a proxy echoed it back.
        return text.replace(self._token, "***") if self._token else text


# ---------------------------------------------------------------------- helpers


def _split_cap_url(url: str) -> Tuple[str, str]:
    problem = "not a capvault cap URL (expected http(s)://host/object/<token>)"
    try:
        parts: Optional[urllib.parse.SplitResult] = urllib.parse.urlsplit(url.strip())
    except ValueError:
        parts = None
    if parts is None:  # raised outside the except block: urlsplit's own error may quote the URL
        raise ValueError(problem)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise ValueError(problem)
    match = re.match(r"^(?P<prefix>.*)/object/(?P<token>[^/]+)/?$", parts.path)
    if match is None or not _TOKEN_SHAPE.match(match.group("token")):
        raise ValueError(problem)
    return f"{parts.scheme}://{parts.netloc}{match.group('prefix')}", match.group("token")


def _path(path: PathArg) -> str:
    """The path as the caller wrote it. Never normalised here: judging it is the vault's job."""
    if isinstance(path, str):
        text = path
    elif isinstance(path, os.PathLike):
        text = os.fspath(path)
        if not isinstance(text, str):
            raise TypeError("paths must be str")
    else:
        raise TypeError("paths must be str")
    try:
        text.encode("utf-8")
        encodable = True
    except UnicodeEncodeError:
        encodable = False
    if not encodable:
        # An unpaired surrogate cannot travel as UTF-8; sending a replacement
        # character instead would silently name a different file.
        raise CapError("invalid_path", "unpaired surrogates are not allowed in paths")
    return text


def _guess_type(path: str) -> Optional[str]:
    guessed, _ = mimetypes.guess_type(path.rsplit("/", 1)[-1], strict=False)
    if guessed and guessed.startswith("text/") and "charset" not in guessed:
        return guessed + "; charset=utf-8"
    return guessed


def _quote_etag(etag: str) -> str:
    etag = etag.strip()
    if etag == "*" or etag.startswith('"') or etag.startswith("W/"):
        return etag
    return f'"{etag}"'


def _sized_stream(stream: IO[bytes]) -> Tuple[Any, int]:
    """A file object and the number of bytes left in it; the vault needs Content-Length."""
    if isinstance(stream, io.TextIOBase):
        raise TypeError("file objects passed to write() must be opened in binary mode")
    try:
        info = os.fstat(stream.fileno())
        if stat.S_ISREG(info.st_mode):  # a pipe or socket reports size 0: never trust that
            return stream, max(info.st_size - stream.tell(), 0)
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        pass
    try:
        if stream.seekable():
            here = stream.tell()
            end = stream.seek(0, os.SEEK_END)
            stream.seek(here)
            return stream, max(end - here, 0)
    except (AttributeError, OSError, ValueError):
        pass
    data = stream.read()
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError("file objects passed to write() must be opened in binary mode")
    return bytes(data), len(data)


def _describe(reason: Any) -> str:
    if isinstance(reason, BaseException):
        detail = getattr(reason, "strerror", None) or str(reason) or ""
        name = type(reason).__name__
        return f"{name}: {detail}" if detail else name
    return str(reason)


def _json_object(raw: bytes) -> Dict[str, Any]:
    try:
        value = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        value = None
    if not isinstance(value, dict):
        raise CapError("bad_response", "the vault answered something that is not a JSON object")
    return value


def _version_id(value: Any) -> str:
    """Where to resume, as the vault sent it; anything but a non-empty string would resume live, skipping changes."""
    if not isinstance(value, str) or value == "":
        raise CapError("bad_response", "the vault's change stream named no version to resume from")
    return value


def _json_value(text: str) -> Dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise CapError("bad_response", "the vault's change stream held something that is not a JSON object")
    return value
