"""Hermes' ``read_file`` over a workspace cap, its lines read by the vault (``GET /lines``).

Argument names and result keys follow ``tools/file_tools.py`` and the ReadResult
of ``tools/file_operations_common.py`` in NousResearch/hermes-agent; the code is
this package's own.
"""

from __future__ import annotations

import difflib
from typing import Any, Dict, List, Optional, Tuple

from ..client import CapError
from ._common import refusal_text, rel

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
MAX_READ_CHARS = 100_000
# The whole file is fetched to page it by lines; past this the read is refused instead.
MAX_READ_BYTES = 50 * 1024 * 1024
BINARY_EXTENSIONS = frozenset(
    ".png .jpg .jpeg .gif .webp .bmp .ico .pdf .zip .gz .tgz .bz2 .xz .7z .tar .exe .dll .so .dylib"
    " .class .jar .pyc .o .a .wasm .mp3 .mp4 .mov .wav .flac .ogg .sqlite .db .woff .woff2 .ttf".split()
)
_BOM = "\ufeff"


def _is_binary(name: str, sample: bytes) -> bool:
    """Hermes' byte-layer rule: NUL, or invalid UTF-8 before the last 3 bytes of the sample."""
    if any(name.lower().endswith(ext) for ext in BINARY_EXTENSIONS):
        return True
    if not sample:
        return False
    if b"\x00" in sample:
        return True
    try:
        sample.decode("utf-8")
        return False
    except UnicodeDecodeError as exc:
        if exc.start >= len(sample) - 3:
            try:
                sample[: exc.start].decode("utf-8")
                return False
            except UnicodeDecodeError:
                pass
        return True


def _size_text(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / (1024 * 1024):.1f} MB"
    if n >= 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n} bytes"


def _int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default



class _ReadTools:
    """read_file, Hermes-shaped: the read part of :class:`~capvault.hermes_plugin.CapFileTools`."""

    _cap: Any

    # ------------------------------------------------------------------ read

    def _load(self, path: str) -> Tuple[Optional[bytes], Dict[str, Any]]:
        """The file's bytes, or an error result (not found names similar files)."""
        try:
            st = self._cap.stat(path)
        except CapError as e:
            if e.code == "not_found":
                return None, {"error": f"File not found: {path}", "similar_files": self._similar(path)}
            return None, {"error": refusal_text(e, path)}
        if st.get("type") == "dir":
            return None, {"error": f"Path is a directory, not a file: {path}"}
        size = int(st.get("size") or 0)
        if size > MAX_READ_BYTES:
            return None, {"error": f"File is too large to read ({_size_text(size)}).", "file_size": size}
        try:
            return self._cap.read(path), {}
        except CapError as e:
            return None, {"error": refusal_text(e, path)}

    def _similar(self, path: str) -> List[str]:
        parent, _, name = path.rpartition("/")
        try:
            names = [e["name"] for e in self._cap.list(parent) if e.get("type") == "file"]
        except CapError:
            return []
        close = difflib.get_close_matches(name, names, n=5, cutoff=0.6)
        return [f"{parent}/{n}" if parent else n for n in close]

    def read_file(self, path: str, offset: Any = 1, limit: Any = DEFAULT_LIMIT) -> Dict[str, Any]:
        """Lines ``offset..offset+limit-1`` as ``N|line`` rows, with Hermes' ReadResult keys.

        The vault reads the lines (``GET /lines``): only the window and the file's
        first 1,000 bytes (Hermes' binary sniff) cross the wire. Lines end at LF
        (CRLF counts once), as Hermes' shell reads number them; a lone CR or a
        Unicode separator stays inside its line. Bytes that are not UTF-8 past
        the sniff, or a file past what the vault reads by lines, are read whole
        and split here the same way.
        """
        p = rel(path)
        offset = max(1, _int(offset, 1))
        limit = max(1, min(_int(limit, DEFAULT_LIMIT), DEFAULT_LIMIT))
        try:
            st = self._cap.stat(p)
        except CapError as e:
            if e.code == "not_found":
                return {"error": f"File not found: {p}", "similar_files": self._similar(p)}
            return {"error": refusal_text(e, p)}
        if st.get("type") == "dir":
            return {"error": f"Path is a directory, not a file: {p}"}
        size = int(st.get("size") or 0)
        try:
            sample = self._cap.read_range(p, 0, 999) if size else b""
        except CapError as e:
            return {"error": refusal_text(e, p)}
        if _is_binary(p, sample):
            return _binary(size)
        try:
            window = self._cap.read_lines(p, offset, limit)
        except CapError as e:
            if e.code == "range_not_satisfiable":
                window = None  # past the end: Hermes answers an empty page with a hint
            elif e.code in ("conflict", "too_large"):
                return self._read_whole(p, offset, limit)
            else:
                return {"error": refusal_text(e, p)}
        if window is None:
            return self._read_whole(p, offset, limit)
        lines = [line[:-1] if line.endswith("\r") else line for line in window["lines"]]
        if offset == 1 and lines and lines[0].startswith(_BOM):
            lines[0] = lines[0][1:]
        return _page(lines, offset, int(window["totalLines"]), int(window["size"]))

    def _read_whole(self, p: str, offset: int, limit: int) -> Dict[str, Any]:
        """read_file on the whole file, split here (what the plugin did before the vault read lines)."""
        data, err = self._load(p)
        if data is None:
            return err
        if _is_binary(p, data[:1000]):
            return _binary(len(data))
        text = data.decode("utf-8", "replace")
        if text.startswith(_BOM):
            text = text[1:]
        lines = _lf_lines(text)
        return _page(lines[offset - 1 : offset - 1 + limit], offset, len(lines), len(data))


def _lf_lines(text: str) -> List[str]:
    """``text`` split as the vault splits it: at LF, a CR before it dropped, no empty line after a last LF."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _binary(size: int) -> Dict[str, Any]:
    return {
        "total_lines": 0,
        "file_size": size,
        "truncated": False,
        "is_binary": True,
        "is_image": False,
        "error": f"Binary file ({_size_text(size)}) — cannot display as text.",
    }


def _page(page: List[str], offset: int, total: int, size: int) -> Dict[str, Any]:
    """Hermes' ReadResult for the lines ``page`` (numbered from ``offset``) of a file of ``total`` lines."""
    rows = [
        f"{i}|{line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + '... [truncated]'}"
        for i, line in enumerate(page, start=offset)
    ]
    content = "\n".join(rows)
    result: Dict[str, Any] = {
        "content": content,
        "total_lines": total,
        "file_size": size,
        "truncated": offset - 1 + len(page) < total,
        "is_binary": False,
        "is_image": False,
    }
    if any(len(line) > MAX_LINE_CHARS for line in page):
        result["truncated_lines"] = True
    if len(content) > MAX_READ_CHARS:
        return {
            "total_lines": total,
            "file_size": size,
            "error": (
                f"Read would return {len(content):,} characters (limit {MAX_READ_CHARS:,}). "
                "Use offset and limit to read a smaller range."
            ),
        }
    if result["truncated"]:
        nxt = offset + len(page)
        result["next_offset"] = nxt
        result["hint"] = f"Use offset={nxt} to continue reading (showing {offset}-{nxt - 1} of {total} lines)"
    elif offset > total and total > 0:
        result["hint"] = f"offset {offset} is past the end of the file ({total} lines)"
    return result
