"""The Hermes plugin (capvault.hermes_plugin) against Hermes' own test cases, over a live vault.

The vectors in hermes_vectors/*.json are Hermes' test inputs and expected
outcomes, copied as data from NousResearch/hermes-agent (each file names the
test file and commit); no Hermes code is used. Each runs through the plugin's
tools on real caps: the disk backend (with real symlinks on the host folder)
and, where no host setup is needed, R2 too. A flagged vector is one where the
cap differs from Hermes by design; its reason is in the file.

Environment: CAPVAULT_TEST_DISK_CAP, CAPVAULT_TEST_DISK_ROOT (a disk root cap and
the host folder it serves) and CAPVAULT_TEST_CAP (an R2 root cap).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import tempfile
import unittest
import uuid
from pathlib import Path
from typing import Any, Dict, List, Tuple

from capvault import CapError, FsCap
from capvault.hermes import HermesFs
from capvault.hermes_plugin import CapFileTools, CapMemory, CapSkills, register
from capvault.hermes_plugin.memory import CapMemory as _Mem

DISK_CAP = os.environ.get("CAPVAULT_TEST_DISK_CAP", "").strip()
DISK_ROOT = os.environ.get("CAPVAULT_TEST_DISK_ROOT", "").strip()
R2_CAP = os.environ.get("CAPVAULT_TEST_CAP", "").strip()
VECTORS = Path(__file__).with_name("hermes_vectors")
PATH_CODES = {"path_escapes", "absolute_path", "outside_root", "invalid_path"}


def vectors(name: str) -> Dict[str, Any]:
    return json.loads((VECTORS / f"{name}.json").read_text(encoding="utf-8"))


def disk_area(tag: str) -> Tuple[FsCap, Path]:
    """A fresh folder on the disk backend: the cap on it, and its host path (for links and outside files)."""
    name = f"hp-{tag}-{uuid.uuid4().hex[:8]}"
    host = Path(DISK_ROOT) / name
    host.mkdir()
    return FsCap(DISK_CAP).subdir(name), host


def r2_area(tag: str) -> FsCap:
    return FsCap(R2_CAP).subdir(f"hp-{tag}-{uuid.uuid4().hex[:8]}")


def backends(tag: str) -> List[Tuple[str, FsCap]]:
    return [("disk", disk_area(tag)[0]), ("r2", r2_area(tag))]


@unittest.skipUnless(DISK_CAP and DISK_ROOT and R2_CAP, "needs a live vault")
class PathSecurityVectors(unittest.TestCase):
    """test_path_security.py: the guards Hermes runs before every open are the vault's job here."""

    def test_each_vector_is_judged_by_the_vault(self) -> None:
        area, host = disk_area("ps")
        root = host / "root"
        (root / "b").mkdir(parents=True)
        (host / "outside.txt").write_text("TOP-SECRET-BYTES")
        (host / "secret").write_text("TOP-SECRET-BYTES")
        (root / "real.txt").write_text("ok")
        os.symlink(host / "outside.txt", root / "link")
        os.symlink(root / "real.txt", root / "inlink")
        cap = area.subdir("root")
        tools = CapFileTools(cap)
        data = vectors("path_security")
        self.assertEqual(len(data["vectors"]), 19)
        for v in data["vectors"]:
            with self.subTest(v["hermes_test"]):
                try:
                    cap.stat(v["path"])
                    got = "ok"
                except CapError as e:
                    got = e.code if e.code in PATH_CODES else "ok"  # not_found: the path itself is allowed
                self.assertEqual(got, v["cap"])
                if "diverges" not in v:  # refused by Hermes exactly when refused by the vault
                    self.assertEqual(got == "ok", v["hermes"] == "ok")
                if v["cap"] in PATH_CODES and v["path"] not in ("", "."):
                    # the plugin's tool sends the path as written and reports the vault's own refusal
                    err = tools.read_file(v["path"]).get("error", "")
                    self.assertIn(f"(refused by the vault: {v['cap']})", err)
                    self.assertNotIn("TOP-SECRET-BYTES", err)
        self.assertEqual(sum(1 for v in data["vectors"] if "diverges" in v), 3)
        self.assertEqual((host / "outside.txt").read_text(), "TOP-SECRET-BYTES")

    def test_a_plugin_without_any_path_check_still_cannot_escape(self) -> None:
        """The plugin's modules hold no traversal or containment check; writes through them still stay inside."""
        import capvault.hermes_plugin as plugin

        import ast

        used = set()
        for module in Path(plugin.__file__).parent.glob("*.py"):
            for node in ast.walk(ast.parse(module.read_text())):
                used.add(getattr(node, "id", None) or getattr(node, "attr", None))
        guards = {"validate_within_dir", "has_traversal_component", "resolve", "realpath", "relative_to", "normpath", "abspath"}
        self.assertEqual(used & guards, set())
        area, host = disk_area("noguard")
        (host / "w").mkdir()
        victim = host / "victim.txt"
        victim.write_text("keep")
        os.symlink(victim, host / "w" / "link.txt")
        tools = CapFileTools(area.subdir("w"))
        for path in ("../victim.txt", str(victim), "link.txt", "a/../../victim.txt"):
            with self.subTest(path):
                self.assertIn("refused by the vault", tools.write_file(path, "owned")["error"])
                self.assertFalse(tools.patch(path, "keep", "owned")["success"])
        self.assertEqual(victim.read_text(), "keep")


@unittest.skipUnless(DISK_CAP and DISK_ROOT, "needs a live vault")
class SkillViewTraversalVectors(unittest.TestCase):
    """test_skill_view_traversal.py, all 9 cases."""

    def test_vectors(self) -> None:
        area, host = disk_area("sv")
        skill = host / "skills" / "test-skill"
        (skill / "references").mkdir(parents=True)
        (skill / "SKILL.md").write_text("# Test Skill\nA test skill.")
        (skill / "references" / "api.md").write_text("API docs here")
        (host / ".env").write_text("SECRET_API_KEY=sk-do-not-leak")
        (host / "outside-skill").mkdir()
        (host / "outside-skill" / "SKILL.md").write_text("# Outside Skill\n")
        (host / "outside-skill" / ".env").write_text("ESCAPED_SECRET=do-not-leak")
        (host / "secret.txt").write_text("TOP SECRET DATA")
        os.symlink(host / "secret.txt", skill / "evil-link")
        skills = CapSkills(HermesFs(area.subdir("skills")))  # the existing adapter works as the cap holder too
        data = vectors("skill_view_traversal")
        self.assertEqual(len(data["vectors"]), 9)
        for v in data["vectors"]:
            with self.subTest(v["hermes_test"]):
                result = skills.skill_view(v["name"].replace("{root}", str(host)), file_path=v.get("file_path"))
                self.assertIs(result["success"], v["success"], result)
                text = json.dumps(result)
                for secret in v.get("never", []):
                    self.assertNotIn(secret, text)
                if "error_has" in v:
                    self.assertTrue(any(s in result["error"].lower() for s in v["error_has"]), result["error"])
                if "code" in v:
                    self.assertIn(f"(refused by the vault: {v['code']})", result["error"])
                if "content_has" in v:
                    self.assertIn(v["content_has"], result["content"])


@unittest.skipUnless(DISK_CAP and DISK_ROOT, "needs a live vault")
class SkillManagerVectors(unittest.TestCase):
    """The file-system-observable cases of test_skill_manager_tool.py."""

    def test_vectors(self) -> None:
        data = vectors("skill_manager")
        contents = data["contents"]

        def fill(call: Dict[str, Any]) -> Dict[str, Any]:
            return {k: (contents[v[1:-1]] if isinstance(v, str) and v[1:-1] in contents else v) for k, v in call.items()}

        for v in data["vectors"]:
            with self.subTest(v["hermes_test"]):
                area, host = disk_area("sm")
                (host / "skills").mkdir()
                cap = area.subdir("skills")
                skills = CapSkills(cap)
                (host / "outside.txt").write_text("old text here")
                if "host_skill_outside" in v:
                    rel_path, body = v["host_skill_outside"]
                    (host / rel_path).parent.mkdir(parents=True)
                    (host / rel_path).write_text(fill({"c": body})["c"])
                for call in v.get("setup", []):
                    self.assertTrue(skills.skill_manage(**fill(call))["success"])
                if "symlink" in v:
                    link, target = v["symlink"]
                    (host / "skills" / link).parent.mkdir(parents=True, exist_ok=True)
                    os.symlink(host / target, host / "skills" / link)
                result = skills.skill_manage(**fill(v["call"]))
                self.assertIs(result["success"], v["success"], result)
                if "error_has" in v:
                    self.assertIn(v["error_has"].lower(), result["error"].lower())
                if "code" in v:
                    self.assertIn(f"(refused by the vault: {v['code']})", result["error"])
                for key, value in v.get("result", {}).items():
                    self.assertEqual(result[key], value)
                for p in v.get("exists", []):
                    self.assertTrue(cap.exists(p), p)
                for p in v.get("absent", []):
                    if p.startswith(".."):
                        self.assertFalse((host / "skills" / p).exists(), p)
                    else:  # no file left below it (a backend may keep an empty folder)
                        self.assertFalse(cap.exists(p) and cap.list(p, depth=0), p)
                if "file_has" in v:
                    self.assertIn(v["file_has"][1], cap.read_text(v["file_has"][0]))
                if "outside_unchanged" in v:
                    self.assertEqual((host / v["outside_unchanged"][0]).read_text(), fill({"c": v["outside_unchanged"][1]})["c"])
        self.assertGreaterEqual(len(data["vectors"]), 25)


class MemoryVectorsBase:
    """test_memory_tool.py persistence, drift and dispatcher cases, on one backend."""

    backend = ""

    def area(self) -> FsCap:
        raise NotImplementedError

    def test_vectors(self) -> None:
        self_: Any = self
        data = vectors("memory")
        drift = "\n\n## Vendor Master\n" + "x" * 800 + "\n\n## Standing Orders\n" + "y" * 800 + "\n\n## Pin Board\n" + "z" * 800
        fills = {"{x490}": "x" * 490, "{y600}": "y" * 600, "{drift}": drift}
        for v in data["vectors"]:
            with self_.subTest(v["hermes_test"]):
                cap = self.area()
                mem = CapMemory(cap, memory_char_limit=500, user_char_limit=300)
                for target, raw in v.get("raw", {}).items():
                    cap.write({"memory": "MEMORY.md", "user": "USER.md"}[target], raw)
                for step in v["steps"]:
                    step = {k: fills.get(x, x) if isinstance(x, str) else x for k, x in step.items()}
                    if "plant" in step:
                        name = "USER.md" if step.get("target") == "user" else "MEMORY.md"
                        cap.write(name, cap.read_text(name) + step["plant"])
                        continue
                    name = "USER.md" if step.get("target") == "user" else "MEMORY.md"
                    before = cap.read(name) if step.get("file_unchanged") else None
                    args = {k: step[k] for k in ("action", "target", "content", "old_text", "operations", "new_text") if k in step}
                    result = mem.memory(**args)
                    if "success" in step:
                        self_.assertIs(result["success"], step["success"], result)
                    if "error_has" in step:
                        self_.assertIn(step["error_has"].lower(), result["error"].lower())
                    for key in step.get("keys", []):
                        self_.assertIn(key, result)
                    for key in step.get("no_keys", []):
                        self_.assertNotIn(key, result)
                    for key, value in step.get("result", {}).items():
                        self_.assertEqual(result[key], value)
                    if before is not None:
                        self_.assertEqual(cap.read(name), before)
                    if "backup_has" in step:
                        self_.assertIn(step["backup_has"], cap.read_text(result["drift_backup"]))
                for target, entries in v.get("entries", {}).items():
                    self_.assertEqual(mem.entries(target), entries)
                for target, entries in v.get("fresh_store_entries", {}).items():
                    self_.assertEqual(CapMemory(cap).entries(target), entries)
                if "file_has" in v:
                    text = cap.read_text("MEMORY.md")
                    for s in v["file_has"]:
                        self_.assertIn(s, text)

    def test_concurrent_writer_is_never_overwritten(self) -> None:
        """Hermes takes flock; here a write that lost a race is refused by If-Match and re-run on fresh bytes."""
        self_: Any = self
        cap = self.area()
        other = CapMemory(cap)

        class Racing(_Mem):
            raced = False

            def _read(self, target: str):  # type: ignore[override]
                got = super()._read(target)
                if not Racing.raced:  # another session writes between our read and our write
                    Racing.raced = True
                    other.add(target, "written by the other session")
                return got

        mem = Racing(cap)
        self_.assertTrue(mem.add("memory", "written by this session")["success"])
        self_.assertEqual(CapMemory(cap).entries("memory"), ["written by the other session", "written by this session"])
        self_.assertFalse(cap.exists("MEMORY.md.lock"))


@unittest.skipUnless(DISK_CAP and DISK_ROOT, "needs a live vault")
class MemoryVectorsDisk(MemoryVectorsBase, unittest.TestCase):
    def area(self) -> FsCap:
        return disk_area("mem")[0]


@unittest.skipUnless(R2_CAP, "needs a live vault")
class MemoryVectorsR2(MemoryVectorsBase, unittest.TestCase):
    def area(self) -> FsCap:
        return r2_area("mem")


@unittest.skipUnless(DISK_CAP and DISK_ROOT and R2_CAP, "needs a live vault")
class FileToolShapes(unittest.TestCase):
    """Result shapes of Hermes' file tools (ReadResult, WriteResult, PatchResult, SearchResult to_dict rules)."""

    def test_read_write_patch_search_on_both_backends(self) -> None:
        for backend, cap in backends("ft"):
            with self.subTest(backend):
                t = CapFileTools(cap)
                w = t.write_file("src/app.py", "def foo():\n    return 1\n\nfoo()\n")
                self.assertEqual(w, {"bytes_written": 31, "dirs_created": True, "verified": True})
                self.assertFalse(t.write_file("src/b.py", "x = 1\n")["dirs_created"])
                r = t.read_file("src/app.py")
                self.assertEqual(r["content"], "1|def foo():\n2|    return 1\n3|\n4|foo()")
                self.assertEqual((r["total_lines"], r["file_size"], r["truncated"], r["is_binary"]), (4, 31, False, False))
                page = t.read_file("./src/app.py", offset=2, limit=2)
                self.assertEqual((page["content"], page["truncated"], page["next_offset"]), ("2|    return 1\n3|", True, 4))
                missing = t.read_file("src/ap.py")
                self.assertIn("not found", missing["error"].lower())
                self.assertEqual(missing["similar_files"][0], "src/app.py")
                cap.write("img.png", b"\x89PNG\r\n\x1a\n\x00\x00")
                self.assertTrue(t.read_file("img.png")["is_binary"])
                p = t.patch("src/app.py", "return 1", "return 2")
                self.assertEqual((p["success"], p["files_modified"], p["match"]), (True, ["src/app.py"], "exact"))
                self.assertIn("-    return 1\n+    return 2\n", p["diff"])
                self.assertIn("Found 2 matches", t.patch("src/app.py", "foo", "bar")["error"])
                self.assertTrue(t.patch("src/app.py", "foo", "bar", replace_all=True)["success"])
                self.assertEqual(cap.read_text("src/app.py"), "def bar():\n    return 2\n\nbar()\n")
                v4a = (
                    "*** Begin Patch\n*** Add File: docs/new.md\n+# New\n+text\n"
                    "*** Update File: src/b.py\n@@\n-x = 1\n+x = 2\n*** Delete File: img.png\n*** End Patch\n"
                )
                res = t.patch(mode="patch", patch=v4a)
                self.assertEqual((res["success"], res["files_created"], res["files_modified"], res["files_deleted"]),
                                 (True, ["docs/new.md"], ["src/b.py"], ["img.png"]))
                self.assertEqual(cap.read_text("src/b.py"), "x = 2\n")
                self.assertFalse(cap.exists("img.png"))
                bad = t.patch(mode="patch", patch="*** Begin Patch\n*** Update File: src/b.py\n-nope\n+x\n*** End Patch\n")
                self.assertFalse(bad["success"])
                self.assertEqual(cap.read_text("src/b.py"), "x = 2\n")
                s = t.search_files("bar", path=".", file_glob="*.py")
                self.assertEqual([(m["path"], m["line"]) for m in s["matches"]], [("src/app.py", 1), ("src/app.py", 4)])
                self.assertEqual(s["total_count"], 2)
                self.assertEqual(t.search_files("bar", output_mode="count")["counts"], {"src/app.py": 2})
                self.assertEqual(t.search_files("x =", output_mode="files_with_matches")["files"], ["src/b.py"])
                ctx = t.search_files("return", context=1)
                self.assertEqual([m["line"] for m in ctx["matches"]], [1, 2, 3])
                paged = t.search_files("bar", limit=1, offset=1)
                self.assertEqual((paged["matches"][0]["line"], paged["total_count"]), (4, 2))
                self.assertEqual(t.search_files("*.md", target="files")["files"], ["docs/new.md"])
                self.assertIn("Invalid regular expression", t.search_files("(", path="src")["error"])


class RegistersLikeHermes(unittest.TestCase):
    """register(ctx) with a context that has Hermes' documented PluginContext.register_tool signature."""

    @unittest.skipUnless(R2_CAP, "needs a live vault")
    def test_register_overrides_the_eight_tools_from_the_environment(self) -> None:
        calls: List[Dict[str, Any]] = []

        class Ctx:  # hermes_cli/plugins.py PluginContext.register_tool (commit 00067189dfecf833d4d009c2dd977ae85cf800e0)
            def register_tool(self, name, toolset, schema, handler, check_fn=None, requires_env=None,
                              is_async=False, description="", emoji="", override=False):
                calls.append({"name": name, "toolset": toolset, "schema": schema, "handler": handler, "override": override})

        ws, sk, mm = r2_area("ws"), r2_area("sk"), r2_area("mm")
        with tempfile.NamedTemporaryFile("w", suffix=".cap", delete=False) as f:
            f.write(sk.url + "\n")  # a cap may be given as a file holding it
        saved = {k: os.environ.get(k) for k in ("CAPVAULT_HERMES_WORKSPACE", "CAPVAULT_HERMES_SKILLS", "CAPVAULT_HERMES_MEMORY")}
        os.environ.update(CAPVAULT_HERMES_WORKSPACE=ws.url, CAPVAULT_HERMES_SKILLS=f.name, CAPVAULT_HERMES_MEMORY=mm.url)
        try:
            names = register(Ctx())
        finally:
            for k, val in saved.items():
                os.environ.pop(k, None) if val is None else os.environ.__setitem__(k, val)
            os.unlink(f.name)
        self.assertEqual(sorted(names), sorted(["read_file", "write_file", "patch", "search_files", "skill_view", "skills_list", "skill_manage", "memory"]))
        by = {c["name"]: c for c in calls}
        self.assertTrue(all(c["override"] for c in calls))
        self.assertEqual({by[n]["toolset"] for n in ("read_file", "patch", "search_files")}, {"file"})
        self.assertEqual(by["skill_view"]["toolset"], "skills")
        self.assertEqual(by["memory"]["schema"]["name"], "memory")
        # Handlers take Hermes' (args, **kwargs) and answer a JSON string
        self.assertEqual(json.loads(by["write_file"]["handler"]({"path": "a.txt", "content": "hi\n"}, task_id="t1"))["bytes_written"], 3)
        self.assertEqual(json.loads(by["read_file"]["handler"]({"path": "a.txt"}))["content"], "1|hi")
        self.assertIn("path_escapes", json.loads(by["read_file"]["handler"]({"path": "../a.txt"}))["error"])
        self.assertTrue(json.loads(by["memory"]["handler"]({"action": "add", "target": "user", "content": "Name: Alice"}))["success"])
        self.assertEqual(mm.read_text("USER.md"), "Name: Alice")
        self.assertEqual(json.loads(by["skills_list"]["handler"]({}))["count"], 0)

    def test_nothing_is_registered_without_caps(self) -> None:
        class Ctx:
            def get_config(self, key):
                return None

            def register_tool(self, **kw):
                raise AssertionError("registered without a cap")

        saved = {k: os.environ.pop(k, None) for k in ("CAPVAULT_HERMES_WORKSPACE", "CAPVAULT_HERMES_SKILLS", "CAPVAULT_HERMES_MEMORY")}
        try:
            self.assertEqual(register(Ctx()), [])
        finally:
            for k, val in saved.items():
                if val is not None:
                    os.environ[k] = val

    def test_the_package_declares_the_hermes_entry_point(self) -> None:
        eps = importlib.metadata.entry_points()
        group = eps.select(group="hermes_agent.plugins") if hasattr(eps, "select") else eps.get("hermes_agent.plugins", [])
        self.assertIn("capvault.hermes_plugin", [ep.value for ep in group])


if __name__ == "__main__":
    unittest.main()
