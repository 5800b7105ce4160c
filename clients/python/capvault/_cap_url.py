"""A cap URL taken apart, and the caller's paths and ids as they go into a request.

Nothing here judges a path: that is the vault's job.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from typing import Optional, Tuple

from ._errors import CapError
from ._types import PathArg

# A token is lowercase base32 in the contract; accept any URL-safe token shape
# so a malformed one still reaches the server (which answers no_such_cap, the
# same as a revoked one) instead of being reshaped by the client.
_TOKEN_SHAPE = re.compile(r"^[A-Za-z0-9_-]+$")


def _quote_param(value: str) -> str:
    # %20 rather than "+" for spaces, and every reserved character escaped, so
    # that any query parser (URLSearchParams, Hono) decodes exactly the string
    # the caller gave, once.
    return urllib.parse.quote(value, safe="")


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
