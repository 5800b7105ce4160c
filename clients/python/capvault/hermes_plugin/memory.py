"""Hermes' ``memory`` tool (MEMORY.md and USER.md, entries joined by ``\\n§\\n``) over a memory-folder cap.

Hermes guards each read-modify-write with ``flock`` and an atomic rename, and
detects external drift before a rewrite. Here every write is conditional on
the bytes read (If-Match on their sha256): a concurrent writer makes the write
fail with ``precondition_failed`` and the operation is re-run on fresh bytes,
so nothing is lost and no lock file exists. Drift (content the entry format
would not round-trip) still refuses replace and remove; the backup copy is
written into the same cap, and the vault's file history keeps every version too.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..client import CapError
from ._common import CapLike, as_cap, refusal_text

ENTRY_DELIMITER = "\n§\n"
FILES = {"memory": "MEMORY.md", "user": "USER.md"}
# A conditional write that keeps losing to other writers gives up after this many rounds.
MAX_ROUNDS = 5
MAX_FAILURES_PER_TURN = 3


class _Retry(Exception):
    """The file changed between our read and our write: run the operation again."""


def _scan(content: str) -> Optional[str]:
    """Hermes' threat scanner when running inside Hermes; outside it there is none to call."""
    try:
        from tools.threat_patterns import first_threat_message  # type: ignore[import-not-found]
    except Exception:  # noqa: BLE001
        return None
    return first_threat_message(content, scope="strict")


def _parse(raw: str) -> List[str]:
    entries = [e.strip() for e in raw.split(ENTRY_DELIMITER)]
    return list(dict.fromkeys(e for e in entries if e))


class CapMemory:
    """The memory store on a cap. One instance per agent, like Hermes' MemoryStore.

    Example::

        mem = CapMemory(FsCap(os.environ["CAPVAULT_HERMES_MEMORY"]))
        mem.memory(action="add", target="user", content="Name: Alice")
        mem.memory(action="replace", target="user", old_text="Alice", content="Name: Alice B.")
    """

    def __init__(self, cap: CapLike, memory_char_limit: int = 2200, user_char_limit: int = 1375) -> None:
        self._cap = as_cap(cap)
        self._limits = {"memory": memory_char_limit, "user": user_char_limit}
        self._entries: Dict[str, List[str]] = {"memory": [], "user": []}
        self._failures = 0

    # ------------------------------------------------------------------ storage

    def _read(self, target: str) -> Tuple[Optional[bytes], str]:
        """The file's bytes (None when absent) and its text."""
        try:
            data = self._cap.read(FILES[target])
        except CapError as e:
            if e.code == "not_found":
                return None, ""
            raise
        return data, data.decode("utf-8", "replace")

    def _write(self, target: str, before: Optional[bytes], entries: List[str]) -> None:
        body = ENTRY_DELIMITER.join(entries).encode("utf-8")
        try:
            if before is None:
                self._cap.write(FILES[target], body, content_type="text/markdown; charset=utf-8", if_none_match="*")
            else:
                cond = "sha256:" + hashlib.sha256(before).hexdigest()
                self._cap.write(FILES[target], body, content_type="text/markdown; charset=utf-8", if_match=cond)
        except CapError as e:
            if e.code == "precondition_failed":
                raise _Retry() from e
            raise
        self._entries[target] = entries

    def _drifted(self, target: str, raw: str) -> bool:
        if not raw.strip():
            return False
        parsed = [e.strip() for e in raw.split(ENTRY_DELIMITER) if e.strip()]
        longest = max((len(e) for e in parsed), default=0)
        return raw.strip() != ENTRY_DELIMITER.join(parsed) or longest > self._limits[target]

    def _backup(self, target: str, raw: str) -> str:
        name = f"{FILES[target]}.bak.{int(time.time())}"
        try:
            self._cap.write(name, raw.encode("utf-8"), content_type="text/markdown; charset=utf-8")
        except CapError as e:
            return f"{name} (BACKUP FAILED: {e.code}; the file is unchanged)"
        return name

    def _mutate(self, target: str, op: Callable[[List[str]], Dict[str, Any]], drift_guard: bool) -> Dict[str, Any]:
        """Read, check drift, apply ``op`` to the entries, write conditionally; again if someone wrote meanwhile.

        ``op`` returns a result dict; ``{"_write": entries, ...}`` asks for the write.
        """
        for _ in range(MAX_ROUNDS):
            try:
                before, raw = self._read(target)
            except CapError as e:
                return {"success": False, "error": refusal_text(e, FILES[target])}
            if drift_guard and self._drifted(target, raw):
                bak = self._backup(target, raw)
                return {
                    "success": False,
                    "error": (
                        f"Refusing to write {FILES[target]}: it holds content that would not round-trip through "
                        f"the memory tool. A snapshot was saved to {bak}. Rewrite it as a clean §-delimited list "
                        "of entries, or move the extra content out, then retry."
                    ),
                    "drift_backup": bak,
                    "remediation": "Open the .bak file, add its entries one at a time with memory(action=add), then clean the file.",
                }
            entries = _parse(raw)
            self._entries[target] = entries
            result = op(list(entries))
            new_entries = result.pop("_write", None)
            if new_entries is None:
                return result
            try:
                self._write(target, before, new_entries)
            except _Retry:
                continue
            except CapError as e:
                return {"success": False, "error": refusal_text(e, FILES[target])}
            return result
        return {"success": False, "error": f"{FILES[target]} kept changing while this call ran; nothing was written. Retry."}

    # ------------------------------------------------------------------ results

    def _usage(self, target: str, entries: List[str]) -> Tuple[int, int]:
        return (len(ENTRY_DELIMITER.join(entries)) if entries else 0), self._limits[target]

    def _ok(self, target: str, entries: List[str], message: str) -> Dict[str, Any]:
        self._failures = 0
        current, limit = self._usage(target, entries)
        pct = min(100, int(current / limit * 100)) if limit > 0 else 0
        return {
            "success": True,
            "done": True,
            "target": target,
            "usage": f"{pct}% — {current:,}/{limit:,} chars",
            "entry_count": len(entries),
            "message": message,
            "note": "Write saved. This update is complete — do not repeat it.",
        }

    def _failure(self, response: Dict[str, Any]) -> Dict[str, Any]:
        self._failures += 1
        if self._failures <= MAX_FAILURES_PER_TURN:
            return response
        return {
            "success": False,
            "done": True,
            "error": (
                f"Memory consolidation failed {self._failures} times this turn. Stop retrying memory calls and "
                "continue with your reply to the user."
            ),
        }

    def reset_consolidation_failures(self) -> None:
        self._failures = 0

    @staticmethod
    def _match(entries: List[str], old_text: str) -> Tuple[Optional[int], Optional[str]]:
        """An entry equal to ``old_text`` wins; otherwise the one entry containing it."""
        for i, e in enumerate(entries):
            if e == old_text:
                return i, None
        hits = [(i, e) for i, e in enumerate(entries) if old_text in e]
        if not hits:
            return None, "none"
        if len({e for _, e in hits}) > 1:
            return None, "many"
        return hits[0][0], None

    # ------------------------------------------------------------------ actions

    def add(self, target: str, content: str) -> Dict[str, Any]:
        content = (content or "").strip()
        if not content:
            return {"success": False, "error": "Content cannot be empty."}
        threat = _scan(content)
        if threat:
            return {"success": False, "error": threat}

        def op(entries: List[str]) -> Dict[str, Any]:
            if content in entries:
                return self._ok(target, entries, "Entry already exists (no duplicate added).")
            new_entries = entries + [content]
            total, limit = self._usage(target, new_entries)
            if total > limit:
                current, _ = self._usage(target, entries)
                return self._failure({
                    "success": False,
                    "error": (
                        f"Memory at {current:,}/{limit:,} chars. Adding this entry ({len(content)} chars) would exceed "
                        "the limit. Consolidate now: 'replace' or 'remove' entries (see current_entries), then retry."
                    ),
                    "current_entries": entries,
                    "usage": f"{current:,}/{limit:,}",
                })
            return {"_write": new_entries, **self._ok(target, new_entries, "Entry added.")}

        # add never rewrites what it did not parse away: no drift guard, like Hermes
        return self._mutate(target, op, drift_guard=False)

    def replace(self, target: str, old_text: str, content: str) -> Dict[str, Any]:
        old_text, content = (old_text or "").strip(), (content or "").strip()
        if not old_text:
            return {"success": False, "error": "old_text cannot be empty."}
        if not content:
            return {"success": False, "error": "new_content cannot be empty. Use 'remove' to delete entries."}
        threat = _scan(content)
        if threat:
            return {"success": False, "error": threat}

        def op(entries: List[str]) -> Dict[str, Any]:
            idx, why = self._match(entries, old_text)
            if idx is None:
                return self._miss(target, entries, old_text, why, "replace")
            new_entries = list(entries)
            replaced = new_entries[idx]
            new_entries[idx] = content
            total, limit = self._usage(target, new_entries)
            if total > limit:
                current, _ = self._usage(target, entries)
                return self._failure({
                    "success": False,
                    "error": f"Replacement would put memory at {total:,}/{limit:,} chars. Shorten it or remove entries, then retry.",
                    "current_entries": entries,
                    "usage": f"{current:,}/{limit:,}",
                })
            return {"_write": new_entries, **self._ok(target, new_entries, "Entry replaced."), "replaced_entry": replaced}

        return self._mutate(target, op, drift_guard=True)

    def remove(self, target: str, old_text: str) -> Dict[str, Any]:
        old_text = (old_text or "").strip()
        if not old_text:
            return {"success": False, "error": "old_text cannot be empty."}

        def op(entries: List[str]) -> Dict[str, Any]:
            idx, why = self._match(entries, old_text)
            if idx is None:
                return self._miss(target, entries, old_text, why, "remove")
            new_entries = entries[:idx] + entries[idx + 1 :]
            return {"_write": new_entries, **self._ok(target, new_entries, "Entry removed.")}

        return self._mutate(target, op, drift_guard=True)

    def _miss(self, target: str, entries: List[str], old_text: str, why: Optional[str], verb: str) -> Dict[str, Any]:
        if why == "many":
            previews = [e[:80] + ("..." if len(e) > 80 else "") for e in entries if old_text in e]
            return {"success": False, "error": f"Multiple entries matched '{old_text}'. Be more specific.", "matches": previews}
        return self._failure({
            "success": False,
            "error": f"No entry matched '{old_text}'. Check current_entries below and retry with the exact text of the entry you want to {verb}.",
            "current_entries": entries,
        })

    def apply_batch(self, target: str, operations: List[Dict[str, Any]]) -> Dict[str, Any]:
        """All operations against the final budget, all or nothing, in one conditional write."""
        if not operations:
            return {"success": False, "error": "operations list is empty."}
        for i, o in enumerate(operations):
            text = (o or {}).get("content") or (o or {}).get("new_text")
            if (o or {}).get("action") in ("add", "replace") and text:
                threat = _scan(text)
                if threat:
                    return {"success": False, "error": f"Operation {i + 1}: {threat}"}

        def op(entries: List[str]) -> Dict[str, Any]:
            work = list(entries)
            for i, o in enumerate(operations):
                o = o or {}
                act = o.get("action")
                content = (o.get("content") or o.get("new_text") or "").strip()
                old_text = (o.get("old_text") or "").strip()
                pos = f"Operation {i + 1} ({act or 'unknown'})"
                if act == "add":
                    if not content:
                        return self._batch_error(target, entries, f"{pos}: content is required.")
                    if content not in work:
                        work.append(content)
                elif act in ("replace", "remove"):
                    if not old_text:
                        return self._batch_error(target, entries, f"{pos}: old_text is required.")
                    if act == "replace" and not content:
                        return self._batch_error(target, entries, f"{pos}: content is required (use action='remove' to delete).")
                    idx, why = self._match(work, old_text)
                    if idx is None:
                        what = "no entry matched" if why == "none" else "matched multiple distinct entries --"
                        return self._batch_error(target, entries, f"{pos}: {what} '{old_text}'.")
                    if act == "replace":
                        work[idx] = content
                    else:
                        work.pop(idx)
                else:
                    return self._batch_error(target, entries, f"{pos}: unknown action. Use add, replace, or remove.")
            total, limit = self._usage(target, work)
            if total > limit:
                return self._batch_error(target, entries, f"After all {len(operations)} operations memory would be at {total:,}/{limit:,} chars.")
            return {"_write": work, **self._ok(target, work, f"Applied {len(operations)} operation(s).")}

        return self._mutate(target, op, drift_guard=True)

    def _batch_error(self, target: str, entries: List[str], message: str) -> Dict[str, Any]:
        current, limit = self._usage(target, entries)
        return self._failure({
            "success": False,
            "error": message + " No operations were applied (batch is all-or-nothing).",
            "usage": f"{current:,}/{limit:,}",
        })

    def entries(self, target: str) -> List[str]:
        """The entries on the vault now (read fresh)."""
        return _parse(self._read(target)[1])

    # ------------------------------------------------------------------ the tool

    def memory(
        self,
        action: Optional[str] = None,
        target: str = "memory",
        content: Optional[str] = None,
        old_text: Optional[str] = None,
        operations: Optional[List[Dict[str, Any]]] = None,
        new_text: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Hermes' memory tool dispatcher: one action, or a batch of ``operations``."""
        if target not in FILES:
            return {"success": False, "error": f"Invalid target '{target}'. Use 'memory' or 'user'."}
        content = content if content else new_text
        if operations:
            if not isinstance(operations, list):
                return {"success": False, "error": "operations must be a list of {action, content?, old_text?} objects."}
            return self.apply_batch(target, operations)
        if not action:
            return {"success": False, "error": "Missing required parameter: give 'action' (add, replace, remove) or 'operations'."}
        if action == "add":
            if not content:
                return {"success": False, "error": "Content is required for 'add' action."}
            return self.add(target, content)
        if action == "replace":
            if old_text and not content:
                return {"success": False, "error": "content is required for 'replace' action."}
            return self.replace(target, old_text or "", content or "")
        if action == "remove":
            return self.remove(target, old_text or "")
        return {"success": False, "error": f"Unknown action '{action}'. Use: add, replace, remove"}
