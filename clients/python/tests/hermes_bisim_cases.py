"""The Hermes bisimulation's plumbing and hostile cases (test_hermes_bisim.py runs them).

One vocabulary for what either side answers (the status quo of
hermes_status_quo.py, or capvault.hermes.HermesFs over a cap), the calls
both sides take, folder snapshots, and the hostile cases: each names what the
vault must answer and how an attacker lays out and swaps the folders.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

from capvault import CapError
from hermes_status_quo import Refused, StatusQuoFs

Side = Any  # StatusQuoFs or HermesFs: the same call shapes
Observation = Tuple[Any, ...]


# ---------------------------------------------------------------------------
# Shared plumbing
# ---------------------------------------------------------------------------


def observe(call: Callable[[], Any]) -> Observation:
    """What a caller sees: a value, or the kind of failure, in one vocabulary for both sides."""
    try:
        return ("ok", call())
    except CapError as e:
        return ("error", e.code)
    except FileNotFoundError:
        return ("error", "not_found")
    except (IsADirectoryError, NotADirectoryError, FileExistsError):
        return ("error", "conflict")
    except UnicodeDecodeError:
        return ("error", "decode")


def read(fs: Side, rel: str, text: bool = False) -> Any:
    with fs.open(rel, "r" if text else "rb") as f:
        return f.read()


def write(fs: Side, rel: str, data: Any) -> None:
    with fs.open(rel, "w" if isinstance(data, str) else "wb") as f:
        f.write(data)


def listdir(fs: Side, rel: str = "") -> List[str]:
    names = fs.listdir(rel)
    # os.listdir has no order; the vault lists by UTF-8 bytes. Same set, compared in the vault's order.
    return sorted(names, key=lambda n: n.encode("utf-8")) if isinstance(fs, StatusQuoFs) else names


def snapshot(folder: Path) -> Dict[str, Any]:
    """Every file (bytes) and folder under ``folder``, by relative path; symlinks as their target."""
    tree: Dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(folder))
            if path.is_symlink():
                tree[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                tree[rel] = "dir"
            else:
                tree[rel] = path.read_bytes()
    return tree


def materialize(folder: Path, files: Dict[str, bytes]) -> None:
    for rel, data in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)


# ---------------------------------------------------------------------------
# Hostile sequences
# ---------------------------------------------------------------------------

SECRET = b"SECRET outside the root"


def lay_out(base: Path) -> None:
    """root/ is what the tool may reach; root_evil/ and outside/ are what it must never reach."""
    materialize(
        base,
        {
            "root/notes/a.txt": b"note",
            "root/skills/hermes-fs-as-cap/SKILL.md": b"# hermes-fs-as-cap\n",
            "root/other-skill/SKILL.md": b"# other\n",
            "root_evil/secret.txt": SECRET,
            "outside/secret.txt": SECRET,
            "outside/victim.txt": b"victim",
        },
    )


def swap_for_link(path: Path, target: Path) -> Callable[[], None]:
    """Replaces ``path`` (file or folder) with a symlink to ``target``: what an attacker's process does."""

    def swap() -> None:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
        os.symlink(target, path)

    return swap


# Each case: name, what the vault must answer (code, message), and the calls: (fs, base, arm) -> value.
# ``arm(swap)`` schedules a swap at the moment between check and open: inside the status quo's
# check-then-open gap, and for the cap right before its one call (it has no gap).
HostileCall = Callable[[Side, Path, Callable[[Callable[[], None]], None]], Any]
ESCAPES = ("path_escapes", "path escapes")
ABSOLUTE = ("absolute_path", "absolute paths forbidden")
OUTSIDE = ("outside_root", "resolved outside root")
HOSTILE: List[Tuple[str, Tuple[str, str], HostileCall]] = [
    ("'..' read", ESCAPES, lambda fs, b, arm: read(fs, "../outside/secret.txt")),
    ("'..' write", ESCAPES, lambda fs, b, arm: write(fs, "../outside/victim.txt", b"pwned")),
    ("'..' deep read", ESCAPES, lambda fs, b, arm: read(fs, "notes/../../outside/secret.txt")),
    ("'..' list", ESCAPES, lambda fs, b, arm: listdir(fs, "..")),
    ("absolute read", ABSOLUTE, lambda fs, b, arm: read(fs, str(b / "outside/secret.txt"))),
    ("absolute write", ABSOLUTE, lambda fs, b, arm: write(fs, str(b / "outside/victim.txt"), b"pwned")),
    ("sibling prefix, absolute", ABSOLUTE, lambda fs, b, arm: read(fs, str(b / "root_evil/secret.txt"))),
    ("sibling prefix, '..'", ESCAPES, lambda fs, b, arm: read(fs, "../root_evil/secret.txt")),
    ("sub-tool reads a sibling", ESCAPES, lambda fs, b, arm: read(fs.scoped("skills"), "../other-skill/SKILL.md")),
    ("sub-tool named by a path", ESCAPES, lambda fs, b, arm: listdir(fs.scoped("../outside"))),
    ("control char in a name", ("invalid_path", "control characters are not allowed in paths"),
     lambda fs, b, arm: write(fs, "notes/a\nb.txt", b"x")),  # fmt: skip
    ("symlink out, read", OUTSIDE,
     lambda fs, b, arm: (os.symlink(b / "outside/secret.txt", b / "root/link"), read(fs, "link"))[1]),  # fmt: skip
    ("symlink out, write", OUTSIDE,
     lambda fs, b, arm: (os.symlink(b / "outside/victim.txt", b / "root/link"), write(fs, "link", b"pwned"))[1]),  # fmt: skip
    ("symlinked folder out, list", OUTSIDE,
     lambda fs, b, arm: (os.symlink(b / "outside", b / "root/dir"), listdir(fs, "dir"))[1]),  # fmt: skip
    ("symlinked folder out, read", OUTSIDE,
     lambda fs, b, arm: (os.symlink(b / "outside", b / "root/dir"), read(fs, "dir/secret.txt"))[1]),  # fmt: skip
    ("file swapped for symlink, read", OUTSIDE,
     lambda fs, b, arm: (arm(swap_for_link(b / "root/notes/a.txt", b / "outside/secret.txt")), read(fs, "notes/a.txt"))[1]),  # fmt: skip
    ("file swapped for symlink, write", OUTSIDE,
     lambda fs, b, arm: (arm(swap_for_link(b / "root/notes/a.txt", b / "outside/victim.txt")), write(fs, "notes/a.txt", b"pwned"))[1]),  # fmt: skip
    ("folder swapped for symlink, read", OUTSIDE,
     lambda fs, b, arm: (arm(swap_for_link(b / "root/notes", b / "outside")), read(fs, "notes/secret.txt"))[1]),  # fmt: skip
    ("folder swapped for symlink, list", OUTSIDE,
     lambda fs, b, arm: (arm(swap_for_link(b / "root/notes", b / "outside")), listdir(fs, "notes"))[1]),  # fmt: skip
    ("sub-tool's folder swapped later", OUTSIDE,
     lambda fs, b, arm: (lambda sub: (swap_for_link(b / "root/skills", b / "outside")(), read(sub, "secret.txt"))[1])(fs.scoped("skills"))),  # fmt: skip
]


def leaked(before: Dict[str, Any], after: Dict[str, Any], seen: Observation) -> bool:
    """A leak: a secret came back, or anything outside the root changed."""
    value = seen[1] if seen[0] == "ok" else None
    got_secret = (isinstance(value, bytes) and SECRET in value) or (isinstance(value, list) and "secret.txt" in value)
    return got_secret or before != after


def outside_state(base: Path) -> Dict[str, Any]:
    return {"outside": snapshot(base / "outside"), "root_evil": snapshot(base / "root_evil")}


def run_hostile(fs_for: Callable[[Path], Side], base: Path, call: HostileCall, status_quo: bool) -> Tuple[Observation, bool]:
    lay_out(base)
    fs = fs_for(base)

    def arm(swap: Callable[[], None]) -> None:
        if status_quo:  # inside the gap, once

            def once() -> None:
                fs.between_check_and_open = None
                swap()

            fs.between_check_and_open = once
        else:
            swap()

    before = outside_state(base)
    try:
        seen = ("ok", call(fs, base, arm))
    except CapError as e:
        seen = ("cap", e.code, e.message)
    except Refused as e:
        seen = ("refused", str(e))
    except OSError as e:
        seen = ("os", type(e).__name__)
    return seen, leaked(before, outside_state(base), seen)
