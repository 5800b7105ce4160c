"""The Hermes bisimulation asked for by the hermes-fs-as-cap bridge document.

The same seeded call sequences run against two sides that start from identical
real folders:

(a) the status quo: Hermes' path guards re-implemented in hermes_status_quo.py,
    then ``open`` / ``os.listdir`` by name on a temp folder;
(b) capvault.hermes.HermesFs over a cap on the vault's disk backend.

Benign sequences (reads, writes, lists, narrower scopes) must give identical
observable I/O at every call, and identical folders at the end. Hostile
sequences (``..``, absolute paths, sibling prefixes, symlinks out, a symlink
swapped in between check and open) must never leak through (b), which answers
with the document's errors, while (a) is shown to leak. Both sides' scorecard
is printed.

Environment: CAPVAULT_TEST_DISK_CAP (a disk root cap URL) and
CAPVAULT_TEST_DISK_ROOT (the host folder it serves). CAPVAULT_BISIM_SEED
replays a run; CAPVAULT_BISIM_SEQUENCES sets the number of benign sequences
(default 200). The two sides' plumbing and the hostile cases: hermes_bisim_cases.py.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import tempfile
import unittest
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from capvault import CapError, FsCap
from capvault.hermes import HermesFs
from hermes_bisim_cases import (
    HOSTILE,
    Side,
    listdir,
    materialize,
    observe,
    read,
    run_hostile,
    snapshot,
    write,
)
from hermes_status_quo import (
    StatusQuoFs,
    has_traversal_component,
    has_unsafe_path_chars,
    validate_within_dir,
)

DISK_CAP = os.environ.get("CAPVAULT_TEST_DISK_CAP", "").strip()
DISK_ROOT = os.environ.get("CAPVAULT_TEST_DISK_ROOT", "").strip()
SEED = int(os.environ.get("CAPVAULT_BISIM_SEED") or random.SystemRandom().randrange(1, 2**31))
SEQUENCES = int(os.environ.get("CAPVAULT_BISIM_SEQUENCES") or 200)

def say(line: str = "") -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


# ---------------------------------------------------------------------------
# (a) is Hermes: the cases of hermes-agent's tests/tools/test_path_security.py
# ---------------------------------------------------------------------------


class StatusQuoMatchesHermesTests(unittest.TestCase):
    """The re-implemented guards answer every case Hermes' own unit tests pin."""

    def test_has_traversal_component(self) -> None:
        table = {
            "foo/../bar": True,
            "../foo": True,
            "..": True,
            "a/../../b": True,
            "foo/bar": False,
            "foo/bar..": False,
            "foo/.../bar": False,
            "foo/./bar": False,
            "": False,
            ".": False,
        }
        for path, expected in table.items():
            self.assertIs(has_traversal_component(path), expected, path)

    def test_has_unsafe_path_chars(self) -> None:
        table = {
            "normal/path.txt": False,
            "malicious/\x00path.txt": True,
            "malicious/\npath.txt": True,
            "a\rb": True,
            "a\x7fb": True,
            "a\u2028b": True,
            "caf\u00e9/\u65e5\u672c.md": False,
        }
        for path, expected in table.items():
            self.assertIs(has_unsafe_path_chars(path), expected, repr(path))

    def test_validate_within_dir(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            base = Path(tmp)
            root = base / "root"
            (root / "b").mkdir(parents=True)
            (root / "real.txt").write_text("ok")
            (base / "outside.txt").write_text("secret")
            os.symlink(base / "outside.txt", root / "link-out")
            os.symlink(root / "real.txt", root / "link-in")
            allowed = [root, root / "sub" / "deep" / "file.txt", root / "a" / ".." / "b", root / "link-in"]
            refused = [root / ".." / "secret", base / "outside.txt", Path("/etc/passwd"), root / "link-out"]
            refused.append(Path(str(root) + "_evil") / "x")  # a sibling sharing root's prefix
            for path in allowed:
                self.assertIsNone(validate_within_dir(path, root), path)
            for path in refused:
                error = validate_within_dir(path, root)
                self.assertIsNotNone(error, path)
                self.assertTrue(error.startswith("Path escapes allowed directory"), error)  # type: ignore[union-attr]


# ---------------------------------------------------------------------------
# Benign sequences
# ---------------------------------------------------------------------------

NAMES = ["a.txt", "b.md", "SKILL.md", "data.json", "notes", "skills", "x", ".hidden", "with space.txt",
         "R\u00e9sum\u00e9.txt", "\u65e5\u672c.md", "x..", "..."]  # fmt: skip


def random_content(rng: random.Random) -> Any:
    kind = rng.random()
    if kind < 0.4:
        return "".join(rng.choice(["line\n", "\u00e9t\u00e9 ", "crlf\r\n", "x", "\U0001f600"]) for _ in range(rng.randint(0, 6)))
    if kind < 0.8:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 40)))
    return b""


def initial_tree(rng: random.Random) -> Dict[str, bytes]:
    files: Dict[str, bytes] = {}
    for _ in range(rng.randint(1, 6)):
        rel = "/".join(rng.choice(NAMES) for _ in range(rng.randint(1, 3)))
        parts = rel.split("/")
        prefixes = {"/".join(parts[:i]) for i in range(1, len(parts))}
        clash = any(p in files for p in prefixes) or any(f.startswith(rel + "/") for f in files)
        if not clash:
            data = random_content(rng)
            files[rel] = data.encode("utf-8") if isinstance(data, str) else data
    return files


class Scope:
    """Where a sequence stands: the two sides' narrower views of the same folder."""

    def __init__(self, sq: StatusQuoFs, cap: HermesFs, folder: Path) -> None:
        self.sq, self.cap, self.folder = sq, cap, folder

    def entries(self) -> Tuple[List[str], List[str]]:
        files, dirs = [], [""]
        for dirpath, dirnames, filenames in os.walk(self.folder):
            rel = Path(dirpath).relative_to(self.folder)
            dirs += [str(rel / d) for d in dirnames]
            files += [str(rel / f) for f in filenames]
        return sorted(files), sorted(dirs)


def pick_call(rng: random.Random, scope: Scope) -> Tuple[str, str, Any]:
    """One benign call: (kind, path, argument), chosen from what the folder holds now."""
    files, dirs = scope.entries()
    # A path that may or may not exist, but never runs through a file: the status quo answers
    # NotADirectoryError there and the vault not_found, a difference of words, not of reach.
    fresh = "/".join([rng.choice(dirs)] + [rng.choice(NAMES) for _ in range(rng.randint(1, 2))]).lstrip("/")
    while "/" in fresh and fresh.rsplit("/", 1)[0] in files:
        fresh = fresh.rsplit("/", 1)[0]
    choices: List[Tuple[float, Callable[[], Tuple[str, str, Any]]]] = [
        (2.0, lambda: ("write", fresh, random_content(rng))),
        (1.5, lambda: ("list", rng.choice(dirs), None)),
        (0.4, lambda: ("list", fresh, None)),  # missing, or a file, or a folder
        (0.4, lambda: ("read", fresh, rng.random() < 0.5)),
    ]
    if files:
        choices += [
            (3.0, lambda: ("read", rng.choice(files), rng.random() < 0.3)),
            (1.5, lambda: ("write", rng.choice(files), random_content(rng))),
            (0.3, lambda: ("write", rng.choice(files) + "/below", b"x")),  # a parent is a file
        ]
    if len(dirs) > 1:
        choices += [
            (1.0, lambda: ("scope", rng.choice(dirs[1:]), None)),
            (0.3, lambda: ("read", rng.choice(dirs[1:]), False)),  # a folder
            (0.3, lambda: ("write", rng.choice(dirs[1:]), b"x")),  # onto a folder
        ]
    choices.append((0.6, lambda: ("unscope", "", None)))
    total = sum(w for w, _ in choices)
    r = rng.uniform(0, total)
    for weight, make in choices:
        r -= weight
        if r <= 0:
            return make()
    return choices[0][1]()


def run_call(fs: Side, kind: str, rel: str, arg: Any) -> Any:
    if kind == "read":
        return read(fs, rel, text=arg)
    if kind == "write":
        return write(fs, rel, arg)
    if kind == "list":
        return listdir(fs, rel)
    raise AssertionError(kind)


def run_benign_sequence(index: int, base_cap: FsCap, cap_base: Path, sq_base: Path) -> Tuple[int, List[str]]:
    """Runs one sequence on both sides; returns (calls made, mismatches)."""
    rng = random.Random(f"{SEED}/{index}")
    name = f"seq-{index:03d}"
    files = initial_tree(rng)
    materialize(sq_base / name, files)
    materialize(cap_base / name, files)
    cap = base_cap.subdir(f"{cap_base.relative_to(DISK_ROOT).as_posix()}/{name}", rights=["read", "write", "list", "subdir"])
    stack = [Scope(StatusQuoFs(sq_base / name), HermesFs(cap), sq_base / name)]
    mismatches: List[str] = []
    calls = rng.randint(3, 8)
    for step in range(calls):
        kind, rel, arg = pick_call(rng, stack[-1])
        where = f"seq {index} call {step}: {kind} {rel!r} in scope {len(stack) - 1}"
        if kind == "unscope":
            if len(stack) > 1:
                stack.pop()
            continue
        if kind == "scope":
            top = stack[-1]
            seen = (observe(lambda: top.sq.scoped(rel)), observe(lambda: top.cap.scoped(rel, label=where)))
            if seen[0][0] == seen[1][0] == "ok":
                stack.append(Scope(seen[0][1], seen[1][1], top.folder / rel))
                continue
        else:
            seen = tuple(observe(lambda fs=fs: run_call(fs, kind, rel, arg)) for fs in (stack[-1].sq, stack[-1].cap))
        if seen[0] != seen[1]:
            mismatches.append(f"{where}: status quo {seen[0]!r} != cap {seen[1]!r}")
            break
    if not mismatches and snapshot(sq_base / name) != snapshot(cap_base / name):
        mismatches.append(f"seq {index}: folders differ at the end: {snapshot(sq_base / name)!r} != {snapshot(cap_base / name)!r}")
    return calls, mismatches


# ---------------------------------------------------------------------------
# HermesFs's own promises, beyond what the two sides share
# ---------------------------------------------------------------------------


@unittest.skipUnless(DISK_CAP, "set CAPVAULT_TEST_DISK_CAP to a disk root cap URL")
class HermesFsTests(unittest.TestCase):
    def setUp(self) -> None:
        self.cap = FsCap(DISK_CAP, proxies={}).subdir(f"hermes-fs-{self._testMethodName}-{random.randrange(10**9)}")
        self.addCleanup(self.cap.revoke)
        self.hfs = HermesFs(self.cap)

    def test_a_with_block_that_raises_writes_nothing(self) -> None:
        self.hfs.open("kept.txt", "w").close()
        for mode, data in (("w", "half"), ("wb", b"half")):
            with self.assertRaises(RuntimeError):
                with self.hfs.open("kept.txt", mode) as f:
                    f.write(data)
                    raise RuntimeError("the tool failed mid-write")
            with self.assertRaises(RuntimeError):
                with self.hfs.open("new.txt", mode) as f:
                    f.write(data)
                    raise RuntimeError("the tool failed mid-write")
        self.assertEqual(self.cap.read("kept.txt"), b"")
        self.assertEqual(self.hfs.listdir(), ["kept.txt"])

    def test_modes(self) -> None:
        with self.hfs.open("t.txt", "w") as f:
            f.write("caf\u00e9\r\nline\n")
        self.assertEqual(self.cap.read("t.txt"), "caf\u00e9\r\nline\n".encode())
        with self.hfs.open("t.txt") as f:
            self.assertEqual(f.read(), "caf\u00e9\nline\n")  # universal newlines, as open() reads text
        with self.hfs.open("t.txt", "rb") as f:
            self.assertEqual(f.read(), "caf\u00e9\r\nline\n".encode())
        with self.assertRaises(CapError) as ctx:
            with self.hfs.open("t.txt", "x") as f:
                f.write("clobber")
        self.assertEqual(ctx.exception.code, "precondition_failed")
        with self.hfs.open("fresh.bin", "xb") as f:
            f.write(b"\x00\xff")
        self.assertEqual(self.cap.read("fresh.bin"), b"\x00\xff")
        for mode in ("a", "r+", "w+", "ab"):
            with self.assertRaises(ValueError):
                self.hfs.open("t.txt", mode)
        self.assertEqual(self.cap.read("t.txt"), "caf\u00e9\r\nline\n".encode())

    def test_scoped_is_a_narrower_cap(self) -> None:
        self.cap.write("skills/a/SKILL.md", b"a")
        self.cap.write("secret.txt", b"s")
        viewer = self.hfs.scoped("skills", rights=["read", "list"])
        self.assertEqual(viewer.listdir(), ["a"])
        self.assertEqual(viewer.open("a/SKILL.md").read(), "a")
        for attempt in (lambda: viewer.open("../secret.txt"), lambda: self.hfs.scoped("../x")):
            with self.assertRaises(CapError) as ctx:
                attempt()
            self.assertEqual(ctx.exception.code, "path_escapes")
        with self.assertRaises(CapError) as ctx:
            with viewer.open("a/SKILL.md", "w") as f:
                f.write("pwned")
        self.assertEqual(ctx.exception.code, "forbidden")
        self.assertEqual(self.cap.read("skills/a/SKILL.md"), b"a")
        self.assertNotIn(self.cap.url.rsplit("/", 1)[-1], repr(viewer) + repr(self.hfs))

    def test_scoped_children_expire_after_an_hour_unless_asked(self) -> None:
        left = _seconds_left(self.hfs.scoped("skills")._cap.minted["expiresAt"])
        self.assertTrue(3000 < left <= 3600, left)
        self.assertLessEqual(_seconds_left(self.hfs.scoped("skills", ttl_seconds=60)._cap.minted["expiresAt"]), 60)
        self.assertIsNone(self.hfs.scoped("skills", ttl_seconds=None)._cap.minted["expiresAt"])


def _seconds_left(expires_at: Optional[str]) -> float:
    assert expires_at is not None, "the child has no expiry"
    return (datetime.fromisoformat(expires_at.replace("Z", "+00:00")) - datetime.now(timezone.utc)).total_seconds()


# ---------------------------------------------------------------------------
# The two sides against each other
# ---------------------------------------------------------------------------


@unittest.skipUnless(DISK_CAP and DISK_ROOT, "set CAPVAULT_TEST_DISK_CAP and CAPVAULT_TEST_DISK_ROOT")
class HermesBisimulation(unittest.TestCase):
    scorecard: List[str] = []

    @classmethod
    def setUpClass(cls) -> None:
        cls.disk = FsCap(DISK_CAP, proxies={})
        cls.cap_base = Path(DISK_ROOT) / f"hermes-bisim-{SEED}"
        cls.tmp = tempfile.TemporaryDirectory(prefix="hermes-status-quo-")
        cls.sq_base = Path(cls.tmp.name)
        say(f"Hermes bisimulation: seed {SEED} (replay: CAPVAULT_BISIM_SEED={SEED})")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.tmp.cleanup()
        shutil.rmtree(cls.cap_base, ignore_errors=True)
        say("\n".join(cls.scorecard))

    def test_benign_sequences_agree(self) -> None:
        benign_sq, benign_cap = self.sq_base / "benign", self.cap_base / "benign"
        with ThreadPoolExecutor(max_workers=4) as pool:
            results = list(
                pool.map(lambda i: run_benign_sequence(i, self.disk, benign_cap, benign_sq), range(SEQUENCES))
            )
        calls = sum(n for n, _ in results)
        mismatches = [m for _, ms in results for m in ms]
        agreed = SEQUENCES - sum(1 for _, ms in results if ms)
        self.scorecard.append(
            f"benign: {SEQUENCES} sequences, {calls} calls: identical I/O and folders in {agreed}/{SEQUENCES}"
        )
        self.assertEqual(mismatches, [], f"replay with CAPVAULT_BISIM_SEED={SEED}")

    def test_hostile_sequences_leak_only_through_the_status_quo(self) -> None:
        rows, sq_leaks, cap_leaks, wrong = [], 0, 0, []
        for number, (name, expected, call) in enumerate(HOSTILE):
            sq_seen, sq_leak = run_hostile(lambda b: StatusQuoFs(b / "root"), self.sq_base / f"hostile-{number}", call, True)
            cap_base = self.cap_base / f"hostile-{number}"
            cap_seen, cap_leak = run_hostile(
                lambda b: HermesFs(self.disk.subdir(f"{self.cap_base.name}/hostile-{number}/root")), cap_base, call, False
            )
            sq_leaks += sq_leak
            cap_leaks += cap_leak
            if cap_seen != ("cap", *expected):
                wrong.append(f"{name}: cap answered {cap_seen!r}, expected {expected!r}")
            sq_text = "LEAKED" if sq_leak else ("refused" if sq_seen[0] == "refused" else f"{sq_seen[0]} {sq_seen[1:]}")
            cap_text = "LEAKED" if cap_leak else f"{cap_seen[1]}: {cap_seen[2]}" if cap_seen[0] == "cap" else repr(cap_seen)
            rows.append(f"  {name:<34} {sq_text:<22} {cap_text}")
        self.scorecard += [
            f"hostile: {len(HOSTILE)} sequences",
            f"  {'case':<34} {'(a) status quo':<22} (b) cap on disk",
            *rows,
            f"score: (a) status quo leaked {sq_leaks}/{len(HOSTILE)}, (b) cap leaked {cap_leaks}/{len(HOSTILE)}",
        ]
        self.assertEqual(cap_leaks, 0)
        self.assertEqual(wrong, [])
        self.assertGreaterEqual(sq_leaks, 1, "the status quo was expected to leak through the swapped symlink")


if __name__ == "__main__":
    unittest.main()
