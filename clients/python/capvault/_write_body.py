"""What a write sends: the body with a known length, its content type, its conditions."""

from __future__ import annotations

import io
import mimetypes
import os
import stat
from typing import IO, Any, Optional, Tuple


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
