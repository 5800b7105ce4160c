"""The shapes the vault answers with, as TypedDicts, and the argument types the client takes.

Only descriptions: nothing here talks to the vault.
"""

from __future__ import annotations

import os
from typing import IO, List, Optional, Union

try:  # Python 3.8+ has TypedDict; keep the import local so the module stays importable everywhere.
    from typing import TypedDict
except ImportError:  # pragma: no cover
    TypedDict = dict  # type: ignore[misc,assignment]

#: The rights a cap can hold.
RIGHTS = ("read", "write", "delete", "list", "subdir")

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
