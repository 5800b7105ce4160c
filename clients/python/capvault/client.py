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

# The code lives beside this module, split by job as the TypeScript SDK is:
# _types (wire shapes), _errors (CapError and its fallback codes), _cap_url
# (the URL, paths and ids), _transport (HTTP, token scrubbing), _write_body,
# _fs_cap (FsCap: identity, delegation) over _fs_cap_files, _fs_cap_versions
# and _watch (its other methods), _events (the event stream). Every name this
# module held before the split is still importable from it.

from __future__ import annotations

from ._cap_url import _TOKEN_SHAPE, _path, _quote_param, _split_cap_url
from ._errors import _STATUS_CODES, CapError
from ._holder import HolderKey
from ._events import MalformedStream, server_events
from ._fs_cap import FsCap, __version__
from ._transport import DEFAULT_TIMEOUT, _describe, _json_object, _RefuseRedirects
from ._types import (
    RIGHTS,
    CapInfo,
    ChildInfo,
    Entry,
    FileStat,
    PathArg,
    TypedDict,
    Version,
    WatchEvent,
    WriteData,
    WriteResult,
)
from ._watch import _IDLE_RECONNECT_SECONDS, _json_value, _version_id
from ._write_body import _guess_type, _quote_etag, _sized_stream

__all__ = [
    "FsCap",
    "HolderKey",
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

# Tracebacks and pickles name the class by its module: keep the name they had.
FsCap.__module__ = __name__
CapError.__module__ = __name__
