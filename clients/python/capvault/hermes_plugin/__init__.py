"""A Hermes plugin that puts Hermes' file, skills and memory tools on caps.

``register(ctx)`` (Hermes' plugin entry point; the package declares it in the
``hermes_agent.plugins`` entry-point group) replaces the built-in
``read_file``, ``write_file``, ``patch``, ``search_files``, ``skill_view``,
``skills_list``, ``skill_manage`` and ``memory`` with versions that take
Hermes' arguments and answer with Hermes' result shapes, but reach only three
caps: the workspace, the skills tree and the memory folder.

The caps come from the plugin's settings (``workspace``, ``skills``,
``memory``) or the environment (``CAPVAULT_HERMES_WORKSPACE``,
``CAPVAULT_HERMES_SKILLS``, ``CAPVAULT_HERMES_MEMORY``), each a cap URL or the
path of a file holding one; never from the model. A tool group whose cap is
not configured is left as Hermes has it. Overriding built-ins needs the
operator's consent in Hermes (``plugins.entries.capvault.allow_tool_override:
true``); without it Hermes refuses the registration.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional

from ..client import FsCap
from ._common import dumps
from .file_tools import CapFileTools
from .memory import CapMemory
from .skills import CapSkills

__all__ = ["register", "load_caps", "build_tools", "CapFileTools", "CapSkills", "CapMemory", "ENV"]

ENV = {
    "workspace": "CAPVAULT_HERMES_WORKSPACE",
    "skills": "CAPVAULT_HERMES_SKILLS",
    "memory": "CAPVAULT_HERMES_MEMORY",
}


def _cap_from(value: Any) -> Optional[FsCap]:
    """A cap URL, or a file holding one (its first non-empty line)."""
    text = str(value or "").strip()
    if not text:
        return None
    if not text.startswith(("http://", "https://")):
        with open(os.path.expanduser(text), encoding="utf-8") as f:
            text = next((line.strip() for line in f if line.strip()), "")
    return FsCap(text) if text else None


def load_caps(ctx: Any = None, environ: Optional[Dict[str, str]] = None) -> Dict[str, FsCap]:
    """The configured caps by role: the plugin's settings first, then the environment."""
    env = os.environ if environ is None else environ
    caps: Dict[str, FsCap] = {}
    for role, var in ENV.items():
        value = None
        getter = getattr(ctx, "get_config", None)
        if callable(getter):
            try:
                value = getter(role)
            except Exception:  # noqa: BLE001  a settings read failing must not hide the environment
                value = None
        cap = _cap_from(value or env.get(var))
        if cap is not None:
            caps[role] = cap
    return caps


def _obj(props: Dict[str, Any], required: List[str]) -> Dict[str, Any]:
    return {"type": "object", "properties": props, "required": required}


_S = {"type": "string"}
_I = {"type": "integer"}
_B = {"type": "boolean"}

SCHEMAS: Dict[str, Dict[str, Any]] = {
    "read_file": {
        "name": "read_file",
        "description": "Read a text file of the workspace as numbered 'N|line' rows. Paths are relative to the workspace.",
        "parameters": _obj({"path": _S, "offset": {**_I, "minimum": 1, "default": 1}, "limit": {**_I, "minimum": 1, "default": 2000}}, ["path"]),
    },
    "write_file": {
        "name": "write_file",
        "description": "Create or replace a file of the workspace with the given content (folders appear as needed).",
        "parameters": _obj({"path": _S, "content": _S}, ["path", "content"]),
    },
    "patch": {
        "name": "patch",
        "description": "Edit files: mode 'replace' swaps old_string for new_string in one file; mode 'patch' applies a V4A patch.",
        "parameters": _obj(
            {"mode": {"type": "string", "enum": ["replace", "patch"], "default": "replace"}, "path": _S,
             "old_string": _S, "new_string": _S, "replace_all": _B, "patch": _S},
            [],
        ),
    },
    "search_files": {
        "name": "search_files",
        "description": "Search the workspace: target 'content' matches a regular expression in files, 'files' matches names.",
        "parameters": _obj(
            {"pattern": _S, "target": {"type": "string", "enum": ["content", "files"], "default": "content"},
             "path": _S, "file_glob": _S, "limit": _I, "offset": _I,
             "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"]}, "context": _I},
            ["pattern"],
        ),
    },
    "skill_view": {
        "name": "skill_view",
        "description": "Show a skill's SKILL.md, or one of its files (references/, templates/, scripts/, assets/).",
        "parameters": _obj({"name": _S, "file_path": _S}, ["name"]),
    },
    "skills_list": {
        "name": "skills_list",
        "description": "List the available skills with their descriptions and categories.",
        "parameters": _obj({"category": _S}, []),
    },
    "skill_manage": {
        "name": "skill_manage",
        "description": "Create, edit, patch or delete a skill, or write/remove a file inside one.",
        "parameters": _obj(
            {"action": {"type": "string", "enum": ["create", "edit", "patch", "delete", "write_file", "remove_file"]},
             "name": _S, "content": _S, "category": _S, "file_path": _S, "file_content": _S,
             "old_string": _S, "new_string": _S, "replace_all": _B},
            ["action", "name"],
        ),
    },
    "memory": {
        "name": "memory",
        "description": "Save durable notes: add, replace or remove an entry of your memory ('memory') or the user profile ('user').",
        "parameters": _obj(
            {"action": {"type": "string", "enum": ["add", "replace", "remove"]},
             "target": {"type": "string", "enum": ["memory", "user"]}, "content": _S, "old_text": _S,
             "operations": {"type": "array", "items": {"type": "object"}}},
            [],
        ),
    },
}

TOOLSETS = {
    "read_file": "file", "write_file": "file", "patch": "file", "search_files": "file",
    "skill_view": "skills", "skills_list": "skills", "skill_manage": "skills", "memory": "memory",
}

Handler = Callable[..., str]


def _pick(args: Dict[str, Any], *names: str) -> Dict[str, Any]:
    return {n: args[n] for n in names if n in args and args[n] is not None}


def build_tools(caps: Dict[str, FsCap]) -> Dict[str, Handler]:
    """The handlers for the configured caps, each ``handler(args, **kwargs) -> JSON string`` like Hermes' own."""
    handlers: Dict[str, Handler] = {}
    if "workspace" in caps:
        files = CapFileTools(caps["workspace"])
        handlers["read_file"] = lambda args, **_: dumps(files.read_file(**_pick(args, "path", "offset", "limit")))
        handlers["write_file"] = lambda args, **_: dumps(files.write_file(args.get("path", ""), args.get("content", "")))
        handlers["patch"] = lambda args, **_: dumps(
            files.patch(**_pick(args, "path", "old_string", "new_string", "replace_all", "mode", "patch"))
        )
        handlers["search_files"] = lambda args, **_: dumps(
            files.search_files(**_pick(args, "pattern", "target", "path", "file_glob", "limit", "offset", "output_mode", "context"))
        )
    if "skills" in caps:
        skills = CapSkills(caps["skills"])
        handlers["skill_view"] = lambda args, **_: dumps(skills.skill_view(**_pick(args, "name", "file_path")))
        handlers["skills_list"] = lambda args, **_: dumps(skills.skills_list(**_pick(args, "category")))
        handlers["skill_manage"] = lambda args, **_: dumps(
            skills.skill_manage(**_pick(args, "action", "name", "content", "category", "file_path", "file_content",
                                        "old_string", "new_string", "replace_all"))
        )
    if "memory" in caps:
        mem = CapMemory(caps["memory"])
        handlers["memory"] = lambda args, **_: dumps(
            mem.memory(**_pick(args, "action", "target", "content", "old_text", "operations", "new_text"))
        )
    return handlers


def register(ctx: Any) -> List[str]:
    """Hermes' plugin hook: override the built-in tools whose cap is configured. Returns their names."""
    handlers = build_tools(load_caps(ctx))
    for name, handler in handlers.items():
        ctx.register_tool(
            name=name,
            toolset=TOOLSETS[name],
            schema=SCHEMAS[name],
            handler=handler,
            description=SCHEMAS[name]["description"],
            emoji="🔐",
            override=True,
        )
    return list(handlers)
