""":class:`FsCap`: a cap URL, its identity, delegation; its other methods come from the mixins it inherits."""

from __future__ import annotations

import os  # noqa: F401  resolves PathArg's "os.PathLike[str]" in this module's annotations
import urllib.request
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ._cap_url import _TOKEN_SHAPE, _path, _quote_param, _split_cap_url
from ._errors import CapError
from ._fs_cap_files import _FileMethods
from ._fs_cap_search import _SearchMethods
from ._fs_cap_trees import _TreeMethods
from ._fs_cap_versions import _VersionMethods
from ._holder import HolderKey
from ._transport import DEFAULT_TIMEOUT, _json_object, _RefuseRedirects
from ._types import CapInfo, ChildInfo, PathArg
from ._watch import _WatchMethod

__version__ = "0.2.0"


class FsCap(_FileMethods, _VersionMethods, _SearchMethods, _TreeMethods, _WatchMethod):
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
        holder: Optional[HolderKey] = None,
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
        #: For a holder-bound cap: every request carries a DPoP proof by this key.
        self._holder = holder
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

    # ------------------------------------------------------------------ delegation

    def subdir(
        self,
        path: PathArg = "",
        rights: Optional[Sequence[str]] = None,
        ttl_seconds: Optional[int] = None,
        label: Optional[str] = None,
        max_bytes: Optional[int] = None,
        max_files: Optional[int] = None,
        history: Optional[str] = None,
        holder: Optional[Any] = None,
    ) -> "FsCap":
        """Mint a child cap rooted at ``path`` (needs ``subdir``).

        ``rights`` must be a subset of this cap's (default: all of them);
        ``path=""`` keeps the same root, for pure attenuation. The child expires
        no later than this cap. ``max_bytes``/``max_files`` set the child's own
        quota, never looser than this cap's (a write past it raises
        ``quota_exceeded``). The child sees only versions written after it was
        minted, unless ``history="all"`` lets it see the history this cap sees.
        The child talks to the same origin as this one;
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
        if history is not None:
            payload["history"] = history
        # ``holder``: a public JWK (sharing to a named holder) or a HolderKey (bound to this client's key).
        if holder is not None:
            payload["holder"] = holder.public_jwk if isinstance(holder, HolderKey) else dict(holder)
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
            holder=holder if isinstance(holder, HolderKey) else None,
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
