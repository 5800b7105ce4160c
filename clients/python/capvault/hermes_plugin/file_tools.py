"""Hermes' ``file`` toolset (read_file, write_file, patch, search_files) over a workspace cap.

Argument names and result keys follow ``tools/file_tools.py`` and the result
dataclasses of ``tools/file_operations_common.py`` in NousResearch/hermes-agent;
the code is this package's own. Every call is one or a few requests to the cap:
there is no shell, no ripgrep and no host path behind it.
"""

from __future__ import annotations

import difflib
import fnmatch
import hashlib
from typing import Any, Dict, List, Optional, Tuple

from ..client import CapError
from ._common import CapLike, as_cap, refusal_text, rel
from .content_search import search_content
from .file_read import _int, _ReadTools

# search_files with target=files lists at most this many files per call.
SEARCH_MAX_FILES = 5000


def _fuzzy(content: str, old: str, new: str, replace_all: bool) -> Tuple[Optional[str], int, str, Optional[str]]:
    """Hermes' ``tools.fuzzy_match`` when it can be imported (inside Hermes), exact matching otherwise.

    Returns ``(new_content or None, count, strategy, error)``; ``strategy`` names
    which matcher decided (``exact`` here, or Hermes' strategy name).
    """
    try:
        from tools.fuzzy_match import fuzzy_find_and_replace  # type: ignore[import-not-found]
    except Exception:  # noqa: BLE001  not inside Hermes: exact matching only
        fuzzy_find_and_replace = None
    if fuzzy_find_and_replace is not None:
        out = fuzzy_find_and_replace(content, old, new, replace_all)
        if len(out) == 4:
            new_content, count, strategy, error = out
        else:
            new_content, count, error = out
            strategy = None
        if error:
            return None, 0, "fuzzy", error
        return new_content, count, f"fuzzy:{strategy or 'hermes'}", None
    if not old:
        return None, 0, "exact", "old_string cannot be empty"
    if old == new:
        return None, 0, "exact", "old_string and new_string are identical"
    count = content.count(old)
    if count == 0:
        return None, 0, "exact", "Could not find a match for old_string in the file (exact matching: Hermes' fuzzy matcher is not loaded)"
    if count > 1 and not replace_all:
        return None, 0, "exact", (
            f"Found {count} matches for old_string. Add more surrounding context or set replace_all=True."
        )
    return content.replace(old, new) if replace_all else content.replace(old, new, 1), count, "exact", None


class CapFileTools(_ReadTools):
    """read_file / write_file / patch / search_files, Hermes-shaped, on one cap.

    Example::

        tools = CapFileTools(FsCap(os.environ["CAPVAULT_HERMES_WORKSPACE"]))
        tools.write_file("notes/a.md", "one\\ntwo\\n")
        tools.read_file("notes/a.md")["content"]      # '1|one\\n2|two'
        tools.read_file("../etc/passwd")["error"]     # "Path traversal ... (refused by the vault: path_escapes)."
    """

    def __init__(self, cap: CapLike) -> None:
        self._cap = as_cap(cap)

    # ------------------------------------------------------------------ write

    def write_file(self, path: str, content: str) -> Dict[str, Any]:
        """Replace the file whole (one atomic write); ``verified`` compares the vault's sha256 with ours."""
        p = rel(path)
        if not isinstance(content, str):
            return {"error": "content must be a string"}
        parent = p.rpartition("/")[0]
        dirs_created = False
        data = content.encode("utf-8")
        try:
            if parent:
                dirs_created = not self._cap.exists(parent)
            written = self._cap.write(p, data)
        except CapError as e:
            return {"error": refusal_text(e, p)}
        return {
            "bytes_written": len(data),
            "dirs_created": dirs_created,
            "verified": written.get("sha256") == hashlib.sha256(data).hexdigest(),
        }

    # ------------------------------------------------------------------ patch

    def patch(
        self,
        path: Optional[str] = None,
        old_string: Optional[str] = None,
        new_string: Optional[str] = None,
        replace_all: bool = False,
        mode: str = "replace",
        patch: Optional[str] = None,
    ) -> Dict[str, Any]:
        """``mode="replace"``: one find-and-replace; ``mode="patch"``: a V4A multi-file patch.

        The write is conditional on the bytes that were read (If-Match on their
        sha256), so a change made meanwhile is refused, never overwritten.
        """
        if mode == "patch":
            return self.patch_v4a(patch or "")
        p = rel(path)
        if old_string is None or new_string is None:
            return {"success": False, "error": "old_string and new_string are required"}
        data, err = self._load(p)
        if data is None:
            return {"success": False, "error": err["error"]}
        before = data.decode("utf-8", "replace")
        after, count, strategy, error = _fuzzy(before, old_string, new_string, bool(replace_all))
        if error or after is None:
            return {"success": False, "error": error, "match": strategy}
        try:
            self._cap.write(p, after.encode("utf-8"), if_match="sha256:" + hashlib.sha256(data).hexdigest())
        except CapError as e:
            return {"success": False, "error": refusal_text(e, p)}
        return {"success": True, "diff": _diff(p, before, after), "files_modified": [p], "match": strategy}

    def patch_v4a(self, text: str) -> Dict[str, Any]:
        """Apply a V4A patch (``*** Begin Patch`` ... ``*** End Patch``): all hunks are checked first.

        Each file is then written conditionally on what was read; files are
        written one by one (the vault has no multi-file transaction).
        """
        try:
            ops = _parse_v4a(text)
        except ValueError as e:
            return {"success": False, "error": str(e)}
        planned: List[Tuple[str, str, Optional[str], Optional[str], Optional[bytes]]] = []
        for op in ops:
            kind, path = op["kind"], rel(op["path"])
            if kind == "add":
                planned.append(("add", path, None, op["content"], None))
                continue
            data, err = self._load(path)
            if data is None:
                return {"success": False, "error": err["error"]}
            before = data.decode("utf-8", "replace")
            if kind == "delete":
                planned.append(("delete", path, None, None, data))
                continue
            after = before
            for old, new in op["hunks"]:
                if old and after.count(old) != 1:
                    found = after.count(old)
                    what = "not found" if found == 0 else f"found {found} times"
                    return {"success": False, "error": f"Hunk for {path} {what}: {old[:80]!r}"}
                after = after.replace(old, new, 1) if old else after + new
            planned.append(("update", path, op.get("move_to"), after, data))
        result: Dict[str, Any] = {"success": True, "diff": "", "files_modified": [], "files_created": [], "files_deleted": []}
        diffs = []
        for kind, path, move_to, after, data in planned:
            cond = None if data is None else "sha256:" + hashlib.sha256(data).hexdigest()
            try:
                if kind == "add":
                    self._cap.write(path, (after or "").encode("utf-8"), if_none_match="*")
                    result["files_created"].append(path)
                    diffs.append(_diff(path, "", after or ""))
                elif kind == "delete":
                    self._cap.delete(path)
                    result["files_deleted"].append(path)
                else:
                    target = rel(move_to) if move_to else path
                    self._cap.write(target, (after or "").encode("utf-8"), if_match=cond if target == path else None)
                    if target != path:
                        self._cap.delete(path)
                    result["files_modified"].append(target)
                    diffs.append(_diff(target, (data or b"").decode("utf-8", "replace"), after or ""))
            except CapError as e:
                result["success"] = False
                result["error"] = refusal_text(e, path)
                break
        result["diff"] = "".join(diffs)
        return {k: v for k, v in result.items() if v or k == "success"}

    # ------------------------------------------------------------------ search

    def search_files(
        self,
        pattern: str,
        target: str = "content",
        path: str = ".",
        file_glob: Optional[str] = None,
        limit: Any = 50,
        offset: Any = 0,
        output_mode: str = "content",
        context: Any = 0,
    ) -> Dict[str, Any]:
        """Hermes' search_files over the cap: a file-name glob (``target="files"``) or a regex over content.

        Content is searched by the vault (content_search.py); file names by a
        bounded listing that skips hidden names below ``path``, as Hermes does.
        When a bound is reached the result says ``truncated`` with a ``limit_reason``.
        """
        base = rel(path)
        limit = max(1, _int(limit, 50))
        offset = max(0, _int(offset, 0))
        context = max(0, min(_int(context, 0), 10))
        if target != "files":
            return search_content(self._cap, base, pattern, file_glob, limit, offset, output_mode, context)
        truncated_by: Optional[str] = None
        files: List[Dict[str, Any]] = []
        try:
            for entry in self._cap.iter_list(base, depth=0):
                # Hermes (ripgrep's default, and its find fallback) skips hidden names below the searched folder.
                if entry.get("type") != "file" or any(part.startswith(".") for part in entry["name"].split("/")):
                    continue
                if len(files) >= SEARCH_MAX_FILES:
                    truncated_by = f"stopped after listing {SEARCH_MAX_FILES} files"
                    break
                files.append(entry)
        except CapError as e:
            return {"total_count": 0, "error": refusal_text(e, base)}
        join = (lambda n: f"{base}/{n}") if base else (lambda n: n)

        def glob_ok(name: str) -> bool:
            return not file_glob or fnmatch.fnmatch(name.rpartition("/")[2], file_glob) or fnmatch.fnmatch(name, file_glob)

        names = [join(e["name"]) for e in files if fnmatch.fnmatch(e["name"].rpartition("/")[2], pattern or "*") and glob_ok(e["name"])]
        out: Dict[str, Any] = {"total_count": len(names)}
        page = names[offset : offset + limit]
        if page:
            out["files"] = page
        if offset + limit < len(names) or truncated_by:
            out["truncated"] = True
            out["total_count_is_lower_bound"] = bool(truncated_by)
        if truncated_by:
            out["limit_reason"] = truncated_by
        return out


def _diff(path: str, before: str, after: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile=f"a/{path}", tofile=f"b/{path}"
        )
    )


def _parse_v4a(text: str) -> List[Dict[str, Any]]:
    """The operations of a V4A patch: Add File (``+`` lines), Delete File, Update File with hunks and Move to."""
    lines = text.replace("\r\n", "\n").split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    if not lines or lines[0].strip() != "*** Begin Patch":
        raise ValueError("V4A patch must start with '*** Begin Patch'")
    ops: List[Dict[str, Any]] = []
    cur: Optional[Dict[str, Any]] = None
    old: List[str] = []
    new: List[str] = []

    def flush_hunk() -> None:
        if cur is not None and cur["kind"] == "update" and (old or new):
            cur["hunks"].append(("\n".join(old) + ("\n" if old else ""), "\n".join(new) + ("\n" if new else "")))
        old.clear()
        new.clear()

    ended = False
    for line in lines[1:]:
        if line.strip() == "*** End Patch":
            ended = True
            break
        header = None
        for prefix, kind in (("*** Add File: ", "add"), ("*** Delete File: ", "delete"), ("*** Update File: ", "update")):
            if line.startswith(prefix):
                header = (kind, line[len(prefix) :].strip())
        if header:
            flush_hunk()
            cur = {"kind": header[0], "path": header[1], "hunks": [], "content": ""}
            ops.append(cur)
            continue
        if cur is None:
            if line.strip():
                raise ValueError(f"V4A patch: unexpected line before any file header: {line[:80]!r}")
            continue
        if line.startswith("*** Move to: "):
            cur["move_to"] = line[len("*** Move to: ") :].strip()
        elif cur["kind"] == "add":
            if line.startswith("+"):
                cur["content"] += line[1:] + "\n"
        elif cur["kind"] == "update":
            if line.startswith("@@"):
                flush_hunk()
            elif line.startswith("-"):
                old.append(line[1:])
            elif line.startswith("+"):
                new.append(line[1:])
            elif line.startswith(" ") or line == "":
                old.append(line[1:])
                new.append(line[1:])
    if not ended:
        raise ValueError("V4A patch must end with '*** End Patch'")
    flush_hunk()
    if not ops:
        raise ValueError("V4A patch has no file operations")
    return ops
