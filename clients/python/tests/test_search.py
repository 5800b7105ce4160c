"""Content search from Python: FsCap.search against a live vault, and the Hermes
plugin's search_files(target="content") running on it instead of a client-side grep.

Environment: CAPVAULT_TEST_CAP (an R2 root cap) and CAPVAULT_TEST_DISK_CAP (a disk root cap).
"""

from __future__ import annotations

import os
import unittest
import uuid
from typing import List, Tuple

from capvault import CapError, FsCap
from capvault.hermes_plugin import CapFileTools

R2_CAP = os.environ.get("CAPVAULT_TEST_CAP", "").strip()
DISK_CAP = os.environ.get("CAPVAULT_TEST_DISK_CAP", "").strip()


def areas() -> List[Tuple[str, FsCap]]:
    return [(name, FsCap(url).subdir(f"search-{uuid.uuid4().hex[:8]}")) for name, url in (("r2", R2_CAP), ("disk", DISK_CAP))]


@unittest.skipUnless(R2_CAP and DISK_CAP, "needs a live vault")
class ContentSearch(unittest.TestCase):
    def test_search_pages_modes_and_refusals(self) -> None:
        for backend, cap in areas():
            with self.subTest(backend=backend):
                cap.write("src/a.py", b"import os\n# TODO one\n")
                cap.write("src/b.py", b"# todo two\nx = 1\n# TODO three\n")
                cap.write("blob.bin", b"TODO\x00\x01")
                page = cap.search("TODO", path="src", context=1)
                self.assertEqual(
                    [(m["path"], m["line"], m["match"]) for m in page["matches"]],
                    [("src/a.py", 1, False), ("src/a.py", 2, True), ("src/b.py", 2, False), ("src/b.py", 3, True)],
                )
                self.assertIsNone(page["cursor"])
                counts = cap.search("todo", ignore_case=True, mode="count")
                self.assertEqual(counts["counts"], [{"path": "src/a.py", "count": 1}, {"path": "src/b.py", "count": 2}])
                self.assertEqual(counts["skipped"], [{"path": "blob.bin", "reason": "binary"}])
                paged = [f for p in cap.iter_search("TODO", mode="files", limit=1) for f in p["files"]]
                self.assertEqual(paged, ["src/a.py", "src/b.py"])
                with self.assertRaises(CapError) as refused:
                    cap.search("(a)\\1")
                self.assertEqual(refused.exception.code, "bad_request")

    def test_hermes_search_files_content_runs_on_the_vault(self) -> None:
        for backend, cap in areas():
            with self.subTest(backend=backend):
                cap.write("notes/a.md", "Grüße aus Köln\nfoo bar\n".encode("utf-8"))
                cap.write("notes/b.md", b"foobar\n")
                tools = CapFileTools(cap)
                # \p{L} is RE2 (and ripgrep) syntax that Python's re does not know: the vault ran this.
                letters = tools.search_files(r"^\p{Lu}\p{Ll}+e ", path="notes")
                self.assertEqual([(m["path"], m["line"]) for m in letters["matches"]], [("notes/a.md", 1)])
                # Lookahead is Python syntax that RE2 refuses: the answer is the vault's refusal.
                self.assertIn("RE2", tools.search_files("foo(?=bar)")["error"])
                files = tools.search_files("foo", output_mode="files_with_matches", limit=1)
                self.assertEqual((files["files"], files["total_count"], files["truncated"]), (["notes/a.md"], 2, True))
                self.assertIn("Not found", tools.search_files("x", path="missing")["error"])


if __name__ == "__main__":
    unittest.main()
