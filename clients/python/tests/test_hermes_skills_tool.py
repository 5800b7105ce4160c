"""test_skills_tool.py's discovery and skill_view cases (hermes_vectors/skills_tool.json) through CapSkills.

Each vector builds its tree on a fresh skills cap of a live vault, on disk
(with real links leading out of the tree) and on R2 (every vector without
links), and calls skills_list or skill_view. Judged as in test_hermes_file_ops:
Hermes' outcome, or for a flagged vector the cap's own and not Hermes'.
"""

from __future__ import annotations

import os
import unittest
from pathlib import Path
from typing import Any, Optional

from capvault import FsCap
from capvault.hermes_plugin import CapSkills
from test_hermes_file_ops import misses
from test_hermes_plugin import DISK_CAP, DISK_ROOT, R2_CAP, disk_area, r2_area, vectors


class SkillsToolVectorsBase:
    backend = ""

    def area(self) -> "tuple[FsCap, Optional[Path]]":
        raise NotImplementedError

    def test_vectors(self) -> None:
        self_: Any = self
        data = vectors("skills_tool")
        ran = flagged = 0
        for v in data["vectors"]:
            if self.backend != "disk" and v.get("disk_only"):
                continue
            with self_.subTest(v["hermes_test"]):
                area, host = self.area()
                cap = area.subdir(v.get("cap_folder", "skills"))
                for path, text in v["tree"].items():
                    cap.write(path, text)
                for path, text in v.get("outside", {}).items():
                    area.write(path, text)
                for link, target in v.get("links", []):
                    (host / "skills").mkdir(exist_ok=True)  # type: ignore[operator]
                    os.symlink(host / target, host / "skills" / link, target_is_directory=True)  # type: ignore[operator]
                call = v["call"]
                result = getattr(CapSkills(cap), call["tool"])(**call["args"])
                against_hermes = misses(v["hermes"], result, cap, host)
                if "diverges" in v:
                    self_.assertEqual(misses(v["cap"], result, cap, host), [], result)
                    self_.assertNotEqual(against_hermes, [], f"flagged but answers as Hermes: {v['diverges']}")
                    flagged += 1
                else:
                    self_.assertEqual(against_hermes, [], result)
                ran += 1
        self_.assertEqual((ran, flagged), (26, 4) if self.backend == "disk" else (23, 1))


@unittest.skipUnless(DISK_CAP and DISK_ROOT, "needs a live vault")
class SkillsToolVectorsDisk(SkillsToolVectorsBase, unittest.TestCase):
    backend = "disk"

    def area(self) -> "tuple[FsCap, Optional[Path]]":
        return disk_area("st")


@unittest.skipUnless(R2_CAP, "needs a live vault")
class SkillsToolVectorsR2(SkillsToolVectorsBase, unittest.TestCase):
    backend = "r2"

    def area(self) -> "tuple[FsCap, Optional[Path]]":
        return r2_area("st"), None


if __name__ == "__main__":
    unittest.main()
