"""Server-sent events as the vault writes them, read from a file-like HTTP response.

Frames end with a blank line; ``event:``, ``id:`` and ``data:`` fields; lines
starting with ``:`` are comments. Only the standard library.
"""

from __future__ import annotations

from typing import Any, Iterator, List, Optional, Tuple

# One event of the vault is a few KiB at most (a path is at most 1 KiB). A
# longer line is not the vault's, and is refused rather than buffered.
MAX_LINE_BYTES = 1024 * 1024
# Nor is a frame longer than this: lines without a blank one between them would otherwise pile up.
MAX_FRAME_BYTES = 1024 * 1024


class MalformedStream(Exception):
    """The stream is not an event stream this client can read."""


def server_events(response: Any) -> Iterator[Tuple[Optional[str], str]]:
    """``(event name or None, data)`` for each frame with data, until the stream ends."""
    event: Optional[str] = None
    data: List[str] = []
    held = 0
    while True:
        raw = response.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        if len(raw) > MAX_LINE_BYTES:
            raise MalformedStream("an event line is too long")
        try:
            line = raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError:
            raise MalformedStream("an event line is not UTF-8") from None
        held += len(raw)
        if held > MAX_FRAME_BYTES:
            raise MalformedStream("an event is too long")
        if line == "":
            if data:
                yield event, "\n".join(data)
            event, data, held = None, [], 0
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            event = value
        elif field == "data":
            data.append(value)
