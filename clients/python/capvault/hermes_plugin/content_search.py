"""search_files with target=content, on the vault's content search (``GET /search``).

The vault walks the folder and runs the regular expression (RE2: what
ripgrep's Rust regex takes, no backreferences or lookaround) page by page,
each page bounded in work; this module follows the cursor and builds
Hermes' result shape from the pages: ``matches`` (context lines included),
``counts`` or ``files``, ``total_count``, and Hermes' offset and limit.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set, Tuple

from ..client import CapError, FsCap
from ._common import refusal_text

# One search_files call follows at most this many pages (each at most 2 MiB scanned on the vault).
SEARCH_MAX_PAGES = 64
SEARCH_MAX_BYTES = 32 * 1024 * 1024
_MODES = {"files_with_matches": "files", "count": "count"}


def search_content(
    cap: FsCap,
    base: str,
    pattern: str,
    file_glob: Optional[str],
    limit: int,
    offset: int,
    output_mode: str,
    context: int,
) -> Dict[str, Any]:
    mode = _MODES.get(output_mode, "lines")
    matches: List[Dict[str, Any]] = []
    shown: Set[Tuple[str, int]] = set()
    counts: Dict[str, int] = {}
    files: List[str] = []
    scanned = 0
    truncated_by: Optional[str] = None
    cursor: Optional[str] = None
    try:
        for pages in range(1, SEARCH_MAX_PAGES + 1):
            page = cap.search(pattern, base, glob=file_glob or None, mode=mode, context=context, limit=200, cursor=cursor)
            scanned += int(page.get("scanned", {}).get("bytes") or 0)
            for row in page.get("matches") or []:
                key = (row["path"], row["line"])
                if key not in shown:  # a page that starts inside a file repeats the context before its first match
                    shown.add(key)
                    matches.append({"path": row["path"], "line": row["line"], "content": row["text"]})
                if row["match"]:
                    counts[row["path"]] = counts.get(row["path"], 0) + 1
            for row in page.get("counts") or []:
                counts[row["path"]] = row["count"]
            files.extend(page.get("files") or [])
            cursor = page.get("cursor")
            if not cursor:
                break
            if pages == SEARCH_MAX_PAGES or scanned >= SEARCH_MAX_BYTES:
                truncated_by = f"stopped after reading {scanned // (1024 * 1024)} MiB in {pages} search pages"
                break
    except CapError as e:
        if e.code == "bad_request" and "pattern" in (e.message or ""):
            return {"total_count": 0, "error": f"Invalid regular expression: {e.message}"}
        return {"total_count": 0, "error": refusal_text(e, base)}
    out: Dict[str, Any] = {}
    if output_mode == "files_with_matches":
        out["total_count"] = len(files)
        if files[offset : offset + limit]:
            out["files"] = files[offset : offset + limit]
        more = offset + limit < len(files)
    elif output_mode == "count":
        out["total_count"] = sum(counts.values())
        if counts:
            out["counts"] = counts
        more = False
    else:
        out["total_count"] = len(matches)
        if matches[offset : offset + limit]:
            out["matches"] = matches[offset : offset + limit]
        more = offset + limit < len(matches)
    if more or truncated_by:
        out["truncated"] = True
        out["total_count_is_lower_bound"] = bool(truncated_by)
    if truncated_by:
        out["limit_reason"] = truncated_by
    return out
