"""Hermes' skills tools (skill_view, skills_list, skill_manage) over a skills-tree cap.

The tree is Hermes' ``~/.hermes/skills`` layout: ``[category/]name/SKILL.md``
plus ``references/``, ``templates/``, ``scripts/``, ``assets/``. Hermes'
naming rules (skill and category names, which sub-folders a file may go in,
SKILL.md frontmatter) are kept: they are policy. Its path guards are not: a
``..``, an absolute path or a link out of the tree is refused by the vault.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from ..client import CapError
from ._common import CapLike, as_cap, refusal_text, rel
from .file_tools import _fuzzy

MAX_NAME_LENGTH = 64
MAX_SKILLS = 2000
MAX_DESCRIPTION_LENGTH = 1024
ALLOWED_SUBDIRS = ("references", "templates", "scripts", "assets")
_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


def _validate_name(name: Any) -> Optional[str]:
    if not name:
        return "Skill name is required."
    if len(name) > MAX_NAME_LENGTH:
        return f"Skill name exceeds {MAX_NAME_LENGTH} characters."
    if not _NAME_RE.match(name):
        return (
            f"Invalid skill name '{name}'. Use lowercase letters, numbers, hyphens, dots, and underscores. "
            "Must start with a letter or digit."
        )
    return None


def _validate_category(category: Any) -> Optional[str]:
    if not category:
        return None
    if len(category) > MAX_NAME_LENGTH or not _NAME_RE.match(category):
        return f"Invalid category '{category}'. Use a single lowercase folder name."
    return None


def _validate_file_path(file_path: Any) -> Optional[str]:
    """Where a supporting file may go. No ``..`` check: the vault refuses those at the call."""
    if not file_path:
        return "file_path is required."
    parts = str(file_path).split("/")
    if parts[-1] == "SKILL.md" and len(parts) <= 2:
        return None
    if parts[0] not in ALLOWED_SUBDIRS:
        return f"File must be under one of: {', '.join(d + '/' for d in ALLOWED_SUBDIRS)}. Got: '{file_path}'"
    if len(parts) < 2 or not parts[-1]:
        return f"Provide a file path, not just a directory. Example: '{parts[0]}/myfile.md'"
    return None


def _frontmatter(content: str) -> Tuple[Dict[str, str], str]:
    """The top-level ``key: value`` lines of a SKILL.md frontmatter, and the body after it."""
    lines = content.split("\n")
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if not lines or lines[0].strip() != "---" or end is None:
        return {}, content
    meta: Dict[str, str] = {}
    for line in lines[1:end]:
        m = re.match(r"^([A-Za-z_][\w-]*):\s*(.*)$", line)
        if m:
            meta[m.group(1)] = m.group(2).strip().strip("'\"")
    return meta, "\n".join(lines[end + 1 :])


def _validate_frontmatter(content: Any) -> Optional[str]:
    if not content or not str(content).strip():
        return "Content cannot be empty."
    text = str(content)
    if not text.startswith("---"):
        return "SKILL.md must start with YAML frontmatter (---). See existing skills for format."
    lines = text.split("\n")
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        return "SKILL.md frontmatter is not closed. Ensure you have a closing '---' line."
    try:  # inside Hermes PyYAML is there; the stdlib has no YAML parser, so outside it keys are read line by line
        import yaml  # type: ignore[import-untyped]

        try:
            parsed = yaml.safe_load("\n".join(lines[1:end]))
        except yaml.YAMLError as e:
            return f"YAML frontmatter parse error: {e}"
        meta = parsed if isinstance(parsed, dict) else {}
    except ImportError:
        meta, _ = _frontmatter(text)
    if "name" not in meta:
        return "Frontmatter must include 'name' field."
    if "description" not in meta:
        return "Frontmatter must include 'description' field."
    if not "\n".join(lines[end + 1 :]).strip():
        return "SKILL.md must have content after the frontmatter (instructions, procedures, etc.)."
    return None


class CapSkills:
    """skill_view / skills_list / skill_manage on the skills cap.

    Example::

        skills = CapSkills(FsCap(os.environ["CAPVAULT_HERMES_SKILLS"]))
        skills.skill_manage("create", "my-skill", content=SKILL_MD, category="devops")
        skills.skill_view("my-skill", file_path="../../.env")["error"]   # "Path traversal ... path_escapes)."
    """

    def __init__(self, cap: CapLike) -> None:
        self._cap = as_cap(cap)

    # ------------------------------------------------------------------ finding

    def _index(self) -> List[str]:
        """The folder of every skill in the tree (the folder holding a SKILL.md), bounded."""
        found: List[str] = []
        try:
            entries = list(self._cap.iter_list("", depth=0))
        except CapError as e:
            if e.code == "not_found":  # no tree yet: no skills, as Hermes answers for a missing skills folder
                return []
            raise
        for entry in entries:
            name = entry.get("name", "")
            # Hermes skips .git, virtualenvs and other dot-folders: a SKILL.md inside them is not a skill.
            if any(part.startswith(".") for part in name.split("/")):
                continue
            if entry.get("type") == "file" and (name == "SKILL.md" or name.endswith("/SKILL.md")):
                if name != "SKILL.md":
                    found.append(name[: -len("/SKILL.md")])
                if len(found) >= MAX_SKILLS:
                    break
        return found

    def _find(self, name: str) -> Tuple[Optional[str], Optional[str]]:
        """``(skill folder, error)``. A name with a ``/`` is a path in the tree; the vault judges it."""
        if "/" in name or name.startswith(".."):
            try:
                st = self._cap.stat(f"{rel(name)}/SKILL.md")
            except CapError as e:
                if e.code == "not_found":
                    return None, f"Skill '{name}' not found."
                return None, refusal_text(e, name)
            return (rel(name), None) if st.get("type") == "file" else (None, f"Skill '{name}' not found.")
        try:
            folders = self._index()
            for folder in folders:
                if folder.rpartition("/")[2] == name:
                    return folder, None
            for item in self._described(folders):  # the name skills_list shows may be the frontmatter's, not the folder's
                if item["name"] == name:
                    return item["folder"], None
        except CapError as e:
            return None, refusal_text(e)
        return None, f"Skill '{name}' not found."

    def _described(self, folders: List[str]) -> List[Dict[str, Any]]:
        """Each skill's name, description and category, as Hermes lists them (sorted by category, then name)."""
        skills = []
        for folder in folders:
            try:
                meta, body = _frontmatter(self._cap.read(f"{folder}/SKILL.md").decode("utf-8-sig", "replace"))
            except CapError:
                continue
            desc = meta.get("description", "")
            if not desc:  # Hermes: the first body line that is not a heading
                desc = next((ln for ln in map(str.strip, body.strip().split("\n")) if ln and not ln.startswith("#")), "")
            if len(desc) > MAX_DESCRIPTION_LENGTH:
                desc = desc[: MAX_DESCRIPTION_LENGTH - 3] + "..."
            item: Dict[str, Any] = {"folder": folder, "name": meta.get("name") or folder.rpartition("/")[2], "description": desc}
            if folder.rpartition("/")[0]:
                item["category"] = folder.rpartition("/")[0]
            skills.append(item)
        skills.sort(key=lambda s: (s.get("category") or "", s["name"]))
        return skills

    def _linked_files(self, folder: str) -> Dict[str, List[str]]:
        linked: Dict[str, List[str]] = {}
        for sub in ALLOWED_SUBDIRS:
            try:
                names = [f"{sub}/{e['name']}" for e in self._cap.iter_list(f"{folder}/{sub}", depth=0) if e.get("type") == "file"]
            except CapError:
                continue
            if names:
                linked[sub] = names
        return linked

    # ------------------------------------------------------------------ tools

    def skill_view(self, name: str, file_path: Optional[str] = None) -> Dict[str, Any]:
        """SKILL.md of a skill, or one file inside its folder."""
        folder, err = self._find(str(name or ""))
        if folder is None:
            out: Dict[str, Any] = {"success": False, "error": err}
            if err and err.endswith("not found."):
                try:
                    out["available_skills"] = [s["name"] for s in self._described(self._index())]
                except CapError:
                    pass
            return out
        target = f"{folder}/{file_path}" if file_path else f"{folder}/SKILL.md"
        try:
            text = self._cap.read(target).decode("utf-8", "replace")
        except CapError as e:
            if e.code == "not_found":
                return {"success": False, "error": f"File '{file_path}' not found in skill '{name}'."}
            return {"success": False, "error": refusal_text(e, file_path or "SKILL.md")}
        meta, _ = _frontmatter(text) if not file_path else ({}, "")
        out: Dict[str, Any] = {"success": True, "name": folder.rpartition("/")[2], "content": text}
        if file_path:
            out["file_path"] = file_path
        else:
            out["description"] = meta.get("description", "")
            out["path"] = target
            linked = self._linked_files(folder)
            if linked:
                out["linked_files"] = linked
        return out

    def skills_list(self, category: Optional[str] = None) -> Dict[str, Any]:
        """Every skill with its description and category (the folders above it)."""
        try:
            folders = self._index()
        except CapError as e:
            return {"success": False, "error": refusal_text(e)}
        if category:
            folders = [f for f in folders if f.rpartition("/")[0] == category]
        skills = [{k: v for k, v in s.items() if k != "folder"} for s in self._described(folders)]
        categories = sorted({s["category"] for s in skills if "category" in s})
        out = {"success": True, "skills": skills, "categories": categories, "count": len(skills)}
        if not skills and not category:
            out["message"] = "No skills found in skills/ directory."
        return out

    def skill_manage(
        self,
        action: str,
        name: str,
        content: Optional[str] = None,
        category: Optional[str] = None,
        file_path: Optional[str] = None,
        file_content: Optional[str] = None,
        old_string: Optional[str] = None,
        new_string: Optional[str] = None,
        replace_all: bool = False,
    ) -> Dict[str, Any]:
        """create / edit / patch / delete a skill, or write_file / remove_file inside one."""
        if action == "create":
            return self._create(name, content, category)
        if action not in ("edit", "patch", "delete", "write_file", "remove_file"):
            return {"success": False, "error": f"Unknown action '{action}'. Use: create, edit, patch, delete, write_file, remove_file"}
        folder, err = self._find(str(name or ""))
        if folder is None:
            return {"success": False, "error": err}
        try:
            if action == "edit":
                bad = _validate_frontmatter(content)
                if bad:
                    return {"success": False, "error": bad}
                self._cap.write(f"{folder}/SKILL.md", str(content))
                return {"success": True, "message": f"Skill '{name}' updated.", "path": folder}
            if action == "patch":
                return self._patch(name, folder, file_path, old_string, new_string, replace_all)
            if action == "delete":
                return self._delete(name, folder)
            bad = _validate_file_path(file_path)
            if bad:
                return {"success": False, "error": bad}
            if action == "write_file":
                if file_content is None:
                    return {"success": False, "error": "file_content is required for 'write_file'."}
                self._cap.write(f"{folder}/{file_path}", file_content)
                return {"success": True, "message": f"File '{file_path}' written to skill '{name}'.", "path": f"{folder}/{file_path}"}
            self._cap.delete(f"{folder}/{file_path}")
            return {"success": True, "message": f"File '{file_path}' removed from skill '{name}'."}
        except CapError as e:
            if e.code == "not_found":
                return {"success": False, "error": f"File '{file_path}' not found in skill '{name}'."}
            return {"success": False, "error": refusal_text(e, file_path or name)}

    def _create(self, name: str, content: Optional[str], category: Optional[str]) -> Dict[str, Any]:
        bad = _validate_name(name) or _validate_category(category) or _validate_frontmatter(content)
        if bad:
            return {"success": False, "error": bad}
        existing, _ = self._find(name)
        if existing is not None:
            return {"success": False, "error": f"A skill named '{name}' already exists at {existing}."}
        folder = f"{category}/{name}" if category else name
        try:
            self._cap.write(f"{folder}/SKILL.md", str(content), if_none_match="*")
        except CapError as e:
            if e.code == "precondition_failed":
                return {"success": False, "error": f"A skill named '{name}' already exists at {folder}."}
            return {"success": False, "error": refusal_text(e, folder)}
        out: Dict[str, Any] = {"success": True, "message": f"Skill '{name}' created.", "path": folder}
        if category:
            out["category"] = category
        return out

    def _patch(self, name: str, folder: str, file_path: Optional[str], old: Optional[str], new: Optional[str], replace_all: bool) -> Dict[str, Any]:
        if file_path:
            bad = _validate_file_path(file_path)
            if bad:
                return {"success": False, "error": bad}
        if old is None or new is None:
            return {"success": False, "error": "old_string and new_string are required for 'patch'."}
        target = f"{folder}/{file_path or 'SKILL.md'}"
        import hashlib

        data = self._cap.read(target)
        after, _count, strategy, error = _fuzzy(data.decode("utf-8", "replace"), old, new, replace_all)
        if error or after is None:
            return {"success": False, "error": error, "match": strategy}
        if target.endswith("/SKILL.md"):
            bad = _validate_frontmatter(after)
            if bad:
                return {"success": False, "error": f"Patch would break SKILL.md: {bad}"}
        self._cap.write(target, after.encode("utf-8"), if_match="sha256:" + hashlib.sha256(data).hexdigest())
        return {"success": True, "message": f"Patched {file_path or 'SKILL.md'} in skill '{name}'.", "match": strategy}

    def _delete(self, name: str, folder: str) -> Dict[str, Any]:
        """Hermes' ``rmtree``: every file below the skill's folder, through the cap (never above it)."""
        if not folder:
            return {"success": False, "error": "Refusing to delete the skills root."}
        try:  # the vault's recursive delete: one request, bounded, the folder and its subfolders gone too
            deleted = self._cap.rmtree(folder)
            return {"success": True, "message": f"Skill '{name}' deleted.", "files_deleted": deleted["files"]}
        except CapError as e:
            if e.code != "too_large":
                raise
        # Past the vault's bound for one request: file by file, then the folders the vault can now take whole.
        files = [e["name"] for e in self._cap.iter_list(folder, depth=0) if e.get("type") == "file"]
        for f in files:
            self._cap.delete(f"{folder}/{f}")
        try:
            self._cap.rmtree(folder)
        except CapError:
            pass
        return {"success": True, "message": f"Skill '{name}' deleted.", "files_deleted": len(files)}
