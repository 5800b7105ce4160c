"""Whole folders and line windows from Python: FsCap.rmtree, FsCap.move of a folder and
FsCap.read_lines against a live vault, and the Hermes plugin's skill_manage(delete) and
read_file running on them instead of client-side loops.

Environment: CAPVAULT_TEST_CAP (an R2 root cap) and CAPVAULT_TEST_DISK_CAP (a disk root cap).
"""

from __future__ import annotations

import os
import unittest
import uuid
from typing import List, Tuple

from capvault import CapError, FsCap
from capvault.hermes_plugin import CapFileTools, CapSkills

R2_CAP = os.environ.get("CAPVAULT_TEST_CAP", "").strip()
DISK_CAP = os.environ.get("CAPVAULT_TEST_DISK_CAP", "").strip()
SKILL = "---\nname: {name}\ndescription: a skill\n---\n# {name}\n"


def areas() -> List[Tuple[str, FsCap]]:
    return [(name, FsCap(url).subdir(f"trees-{uuid.uuid4().hex[:8]}")) for name, url in (("r2", R2_CAP), ("disk", DISK_CAP))]


def files(cap: FsCap, path: str = "") -> List[str]:
    return sorted(e["name"] for e in cap.list(path, depth=0))


@unittest.skipUnless(R2_CAP and DISK_CAP, "needs a live vault")
class FolderTrees(unittest.TestCase):
    def test_rmtree_move_and_their_refusals(self) -> None:
        for backend, cap in areas():
            with self.subTest(backend=backend):
                for name in ("a/x.txt", "a/s/y.txt", "keep.txt"):
                    cap.write(name, name.encode())
                self.assertEqual(cap.move("a", "b")["moved"], {"files": 2, "folders": 2})
                self.assertEqual(files(cap), ["b/s/y.txt", "b/x.txt", "keep.txt"])
                with self.assertRaises(CapError) as into:
                    cap.move("b", "b/s/deeper")
                self.assertEqual(into.exception.code, "conflict")
                self.assertEqual(cap.rmtree("b"), {"files": 2, "folders": 2})
                self.assertFalse(cap.exists("b"))
                self.assertEqual(files(cap), ["keep.txt"])
                for bad in ("keep.txt", "", "../up"):
                    with self.assertRaises(CapError):
                        cap.rmtree(bad)
                for i in range(21):
                    cap.write(f"big/f{i:02d}", b"x")
                with self.assertRaises(CapError) as big:
                    cap.rmtree("big")
                self.assertEqual(big.exception.code, "too_large")
                self.assertEqual(len(files(cap, "big")), 21)

    def test_read_lines_windows(self) -> None:
        for backend, cap in areas():
            with self.subTest(backend=backend):
                cap.write("t.txt", "één\r\ntwee\ndrie".encode("utf-8"))
                page = cap.read_lines("t.txt", offset=2, limit=1)
                self.assertEqual(page, {"lines": ["twee"], "offset": 2, "totalLines": 3, "nextOffset": 3, "size": 16})
                self.assertEqual(cap.read_lines("t.txt")["lines"], ["één\r", "twee", "drie"])
                for offset, limit, code in ((4, None, "range_not_satisfiable"), (1, 2001, "bad_request"), (0, 1, "bad_request")):
                    with self.assertRaises(CapError) as refused:
                        cap.read_lines("t.txt", offset=offset, limit=limit)
                    self.assertEqual(refused.exception.code, code)


@unittest.skipUnless(R2_CAP and DISK_CAP, "needs a live vault")
class HermesPluginOnTrees(unittest.TestCase):
    def test_skill_manage_delete_takes_the_whole_folder(self) -> None:
        for backend, cap in areas():
            with self.subTest(backend=backend):
                skills = CapSkills(cap)
                self.assertTrue(skills.skill_manage("create", "tidy", content=SKILL.format(name="tidy"))["success"])
                skills.skill_manage("write_file", "tidy", file_path="references/a.md", file_content="ref")
                skills.skill_manage("write_file", "tidy", file_path="assets/deep/b.txt", file_content="asset")
                done = skills.skill_manage("delete", "tidy")
                self.assertEqual((done["success"], done["files_deleted"]), (True, 3))
                # rmtree takes the folders too: before, the emptied references/ and assets/ stayed behind.
                self.assertFalse(cap.exists("tidy"))
                self.assertEqual(cap.list(""), [])

    def test_read_file_through_lines_answers_as_the_whole_file_read(self) -> None:
        cases = {
            "plain.txt": b"one\ntwo\nthree\n",
            "crlf.txt": b"a\r\nb\r\nc",
            "bom.txt": "\ufefffirst\nsecond\n".encode("utf-8"),
            "lone-cr.txt": b"a\rb\nc\n",
            "separator.txt": "x\u2028y\nz\n".encode("utf-8"),
            "late-bad.txt": b"ok\n" * 400 + b"\xff\xfe\n",
            "nul.txt": b"a\x00b\n",
            "empty.txt": b"",
            "long.txt": ("L" * 2500 + "\n").encode() * 3,
        }
        for backend, cap in areas():
            with self.subTest(backend=backend):
                for name, data in cases.items():
                    cap.write(name, data)
                tools = CapFileTools(cap)
                for name in cases:
                    for offset, limit in ((1, 2000), (2, 1), (3, 5), (500, 10)):
                        with self.subTest(name=name, offset=offset, limit=limit):
                            self.assertEqual(tools.read_file(name, offset, limit), tools._read_whole(name, offset, limit))


if __name__ == "__main__":
    unittest.main()
