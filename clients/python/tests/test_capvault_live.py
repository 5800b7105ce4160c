"""The capvault client against a real vault's R2 root, when
``CAPVAULT_TEST_CAP`` holds an R2 root cap URL with all rights.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import unittest
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, List, Tuple

from capvault_test_support import (
    CapError,
    FsCap,
    R2_CAP,
    local_cap,
    token_of,
    LiveBase,
)


@unittest.skipUnless(R2_CAP, "set CAPVAULT_TEST_CAP to an R2 root cap URL to run live tests")
class LiveR2Tests(LiveBase):
    ROOT_URL = R2_CAP

    # -- the hermes-fs-as-cap test vector --------------------------------------

    def test_hermes_fs_as_cap_vector(self) -> None:
        fs = self.root
        self.assertRefused("path_escapes", lambda: fs.read("../../../etc/passwd"), fs)
        self.assertRefused("absolute_path", lambda: fs.read("/etc/passwd"), fs)

        # The same vector one level down, with a real sibling the escape would reach.
        t = self.fs
        t.write("skills/hermes-fs-as-cap/SKILL.md", "---\nname: hermes-fs-as-cap\n---\nbody\n")
        t.write("other-skill/SKILL.md", "secret sibling")
        t.write("skills/other-skill/SKILL.md", "not the escape target either")
        sub = t.subdir("skills")
        self.assertEqual(sub.read("hermes-fs-as-cap/SKILL.md"), b"---\nname: hermes-fs-as-cap\n---\nbody\n")
        self.assertRefused("path_escapes", lambda: sub.read("../other-skill/SKILL.md"), sub, t, fs)
        self.assertRefused("path_escapes", lambda: sub.read("hermes-fs-as-cap/../../other-skill/SKILL.md"), sub)
        self.assertRefused("absolute_path", lambda: sub.read("/other-skill/SKILL.md"), sub)
        self.assertRefused("invalid_path", lambda: sub.read("a//b"), sub)
        self.assertRefused("invalid_path", lambda: sub.read("a\\b"), sub)
        self.assertRefused("invalid_path", lambda: sub.read(""), sub)
        # A literal "%2e%2e" is a name, not a parent reference: decoded once, never twice.
        self.assertRefused("not_found", lambda: sub.read("%2e%2e/other-skill/SKILL.md"), sub)

    # -- round trips -----------------------------------------------------------

    def test_bytes_round_trip(self) -> None:
        samples = {
            "all-bytes.bin": bytes(range(256)) * 4,
            "not-utf8.bin": b"\xff\xfe\x00\x80\xc3\x28\xed\xa0\x80",
            "empty": b"",
            "caf\u00e9 \U0001f600.txt": "h\u00e9llo \U0001f600\n".encode("utf-8"),
            "a b+c&d=e#f?g;h%20.txt": b"reserved characters in a name",
            "%2e%2e": b"a file literally named %2e%2e",
        }
        for name, data in samples.items():
            r = self.fs.write(name, data)
            self.assertTrue(r["created"], name)
            self.assertEqual(r["size"], len(data), name)
            self.assertEqual(r["etag"], hashlib.md5(data).hexdigest(), name)
        for name, data in samples.items():
            self.assertEqual(self.fs.read(name), data, name)
        self.assertEqual(sorted(e["name"] for e in self.fs.list()), sorted(samples))
        self.assertEqual(self.fs.read_text("caf\u00e9 \U0001f600.txt"), "h\u00e9llo \U0001f600\n")

        r = self.fs.write("text.txt", "\u00e9t\u00e9")
        self.assertEqual(self.fs.read("text.txt"), "\u00e9t\u00e9".encode("utf-8"))
        self.assertEqual(r["size"], 5)

        big = os.urandom(3 * 1024 * 1024 + 17)
        self.fs.write("stream.bin", io.BytesIO(big))
        self.assertEqual(hashlib.sha256(self.fs.read("stream.bin")).digest(), hashlib.sha256(big).digest())

    def test_replace_and_conditional_writes(self) -> None:
        first = self.fs.write("doc.txt", b"v1")
        self.assertTrue(first["created"])
        second = self.fs.write("doc.txt", b"v2", if_match=first["etag"])
        self.assertFalse(second["created"])
        self.assertRefused("precondition_failed", lambda: self.fs.write("doc.txt", b"v3", if_match=first["etag"]), self.fs)
        self.assertRefused("precondition_failed", lambda: self.fs.write("doc.txt", b"v3", if_none_match="*"), self.fs)
        self.assertEqual(self.fs.read("doc.txt"), b"v2")
        self.assertTrue(self.fs.write("new.txt", b"n", if_none_match="*")["created"])
        self.assertRefused("precondition_failed", lambda: self.fs.write("absent.txt", b"x", if_match=first["etag"]), self.fs)
        self.assertFalse(self.fs.exists("absent.txt"))

    def test_read_range(self) -> None:
        self.fs.write("r.bin", b"0123456789")
        self.assertEqual(self.fs.read_range("r.bin", 2, 5), b"234")
        self.assertEqual(self.fs.read_range("r.bin", 7), b"789")
        self.assertEqual(self.fs.read_range("r.bin", -3), b"789")
        self.assertRefused("range_not_satisfiable", lambda: self.fs.read_range("r.bin", 10), self.fs)

    def test_stat(self) -> None:
        self.fs.write("d/s.md", "# hi\n", content_type="text/markdown; charset=utf-8")
        st = self.fs.stat("d/s.md")
        self.assertEqual(st["type"], "file")
        self.assertEqual(st["size"], 5)
        self.assertEqual(st["etag"], hashlib.md5(b"# hi\n").hexdigest())
        self.assertEqual(st["contentType"], "text/markdown; charset=utf-8")
        self.assertIsInstance(st["modified"], str)
        self.assertEqual(self.fs.stat("d"), {"type": "dir"})
        self.assertEqual(self.fs.stat("d/"), {"type": "dir"})
        self.assertEqual(self.fs.stat("")["type"], "dir")
        self.assertRefused("not_found", lambda: self.fs.stat("d/missing"), self.fs)
        self.assertTrue(self.fs.exists("d/s.md"))
        self.assertFalse(self.fs.exists("nope"))
        self.assertRefused("path_escapes", lambda: self.fs.exists("../x"), self.fs)

    def test_conflicts_between_files_and_folders(self) -> None:
        self.fs.write("f", b"file")
        self.assertRefused("conflict", lambda: self.fs.write("f/child", b"x"), self.fs)
        self.fs.write("dir/inner", b"x")
        self.assertRefused("conflict", lambda: self.fs.write("dir", b"x"), self.fs)
        self.assertRefused("conflict", lambda: self.fs.read("dir"), self.fs)
        self.assertRefused("conflict", lambda: self.fs.delete("dir"), self.fs)
        self.assertEqual(self.fs.read("dir/inner"), b"x")

    def test_delete(self) -> None:
        self.fs.write("gone/a.txt", b"a")
        self.fs.write("keep.txt", b"k")
        self.assertIsNone(self.fs.delete("gone/a.txt"))
        self.assertRefused("not_found", lambda: self.fs.read("gone/a.txt"), self.fs)
        self.assertRefused("not_found", lambda: self.fs.delete("gone/a.txt"), self.fs)
        # A folder stays when its last file goes, until it is removed.
        self.assertEqual([e["name"] for e in self.fs.list()], ["gone", "keep.txt"])
        self.assertEqual(self.fs.list("gone"), [])
        self.assertRefused("path_escapes", lambda: self.fs.delete("../keep.txt"), self.fs)

    def test_move(self) -> None:
        self.fs.write("a.txt", b"A")
        self.fs.write("b.txt", b"B")
        self.fs.move("a.txt", "moved/a.txt")
        self.assertRefused("not_found", lambda: self.fs.read("a.txt"), self.fs)
        self.assertEqual(self.fs.read("moved/a.txt"), b"A")

        self.assertRefused("conflict", lambda: self.fs.move("moved/a.txt", "b.txt"), self.fs)
        self.assertEqual((self.fs.read("moved/a.txt"), self.fs.read("b.txt")), (b"A", b"B"))
        self.fs.move("moved/a.txt", "b.txt", overwrite=True)
        self.assertEqual(self.fs.read("b.txt"), b"A")
        self.assertFalse(self.fs.exists("moved/a.txt"))

        self.assertRefused("path_escapes", lambda: self.fs.move("b.txt", "../escaped.txt"), self.fs)
        self.assertRefused("absolute_path", lambda: self.fs.move("b.txt", "/tmp/escaped.txt"), self.fs)
        self.assertRefused("path_escapes", lambda: self.fs.move("../../x", "y"), self.fs)
        self.assertRefused("not_found", lambda: self.fs.move("missing", "y"), self.fs)
        self.assertEqual(self.fs.read("b.txt"), b"A")

    # -- listing ---------------------------------------------------------------

    def test_list_is_sorted_by_utf8_bytes_and_shows_folders_once(self) -> None:
        names = ["b", "a", "Z", "\u00e9", "\ufffd", "\U0001f600", "a.txt"]
        for n in names:
            self.fs.write(n, n.encode("utf-8"))
        self.fs.write("dir/x", b"1")
        self.fs.write("dir/y", b"2")
        self.fs.write("dir/deeper/z", b"3")
        entries = self.fs.list()
        got = [e["name"] for e in entries]
        expected = sorted(names + ["dir"], key=lambda s: s.encode("utf-8"))
        self.assertEqual(got, expected)  # U+FFFD before U+1F600: UTF-8 order, not UTF-16
        by_name = {e["name"]: e for e in entries}
        self.assertEqual(by_name["dir"]["type"], "dir")
        self.assertEqual(by_name["a"]["type"], "file")
        self.assertEqual(by_name["a"]["size"], 1)
        self.assertEqual([e["name"] for e in self.fs.list("dir")], ["deeper", "x", "y"])
        self.assertRefused("not_found", lambda: self.fs.list("no-such-dir"), self.fs)
        self.assertRefused("path_escapes", lambda: self.fs.list(".."), self.fs)

    def test_list_follows_cursors_across_pages(self) -> None:
        # Pages of 40 and 33 over 100 files: the same cursor-following as the
        # server's default pages of 1000 over 1100 files, at a tenth of the writes.
        count = 100
        page = self.fs.subdir("many")
        names = [f"f{i:05d}.txt" for i in range(count)]
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(lambda n: page.write(n, n.encode()), names))

        first, cursor = page.list_page(limit=40)
        self.assertEqual([e["name"] for e in first], names[:40])
        self.assertIsNotNone(cursor, "100 files must not fit in a page of 40")
        rest, _ = page.list_page(cursor=cursor, limit=40)
        self.assertEqual([e["name"] for e in rest], names[40:80])

        self.assertEqual([e["name"] for e in page.list()], names)
        self.assertEqual([e["name"] for e in page.list(page_size=40)], names)
        small_pages = [e["name"] for e in page.iter_list(page_size=33)]
        self.assertEqual(small_pages, names)
        self.assertRefused("bad_request", lambda: page.list_page(limit=1001), page)
        self.assertRefused("bad_request", lambda: page.list_page(limit=0), page)

    # -- delegation, attenuation, revocation -----------------------------------

    def test_info(self) -> None:
        info = self.fs.info()
        self.assertEqual(sorted(info["rights"]), sorted(["read", "write", "delete", "list", "subdir"]))
        self.assertEqual(info["label"], f"python {self._testMethodName}")
        self.assertEqual(info["id"], self.fs.minted["id"])
        self.assertIn("createdAt", info)
        self.assertIn("expiresAt", info)
        self.assertEqual(info["parent"], self.root.info()["id"])
        self.assertNotIn(token_of(self.fs), json.dumps(info))

    def test_read_only_subdir_cannot_write_delete_move_or_mint(self) -> None:
        self.fs.write("shared/notes.md", b"hello")
        ro = self.fs.subdir("shared", rights=["read", "list"], label="reader")
        self.assertEqual(ro.read("notes.md"), b"hello")
        self.assertEqual([e["name"] for e in ro.list()], ["notes.md"])
        self.assertEqual(sorted(ro.info()["rights"]), ["list", "read"])
        self.assertRefused("forbidden", lambda: ro.write("notes.md", b"pwned"), ro)
        self.assertRefused("forbidden", lambda: ro.write("new.md", b"x"), ro)
        self.assertRefused("forbidden", lambda: ro.delete("notes.md"), ro)
        self.assertRefused("forbidden", lambda: ro.move("notes.md", "n2.md"), ro)
        self.assertRefused("forbidden", lambda: ro.subdir(""), ro)
        self.assertRefused("forbidden", ro.children, ro)
        self.assertEqual(self.fs.read("shared/notes.md"), b"hello")

        # Rights never grow: a reader that may mint cannot mint a writer.
        minter = self.fs.subdir("", rights=["read", "subdir"])
        self.assertRefused("forbidden", lambda: minter.subdir("", rights=["read", "write"]), minter)
        self.assertEqual(minter.subdir("shared", rights=["read"]).read("notes.md"), b"hello")
        self.assertRefused("bad_request", lambda: self.fs.subdir("", rights=["root"]), self.fs)
        self.assertRefused("path_escapes", lambda: self.fs.subdir(".."), self.fs)
        self.assertRefused("absolute_path", lambda: self.fs.subdir("/etc"), self.fs)

        write_only = self.fs.subdir("", rights=["write"])
        self.assertRefused("forbidden", lambda: write_only.read("shared/notes.md"), write_only)
        self.assertRefused("forbidden", lambda: write_only.list(), write_only)

    def test_children_and_expiry(self) -> None:
        a = self.fs.subdir("a", rights=["read"], label="child-a", ttl_seconds=3600)
        b = self.fs.subdir("", label="child-b")
        kids = {c["id"]: c for c in self.fs.children()}
        self.assertEqual(set(kids), {a.minted["id"], b.minted["id"]})
        self.assertEqual((kids[a.minted["id"]]["path"], kids[a.minted["id"]]["label"]), ("a", "child-a"))
        self.assertEqual(kids[a.minted["id"]]["rights"], ["read"])
        self.assertEqual(kids[b.minted["id"]]["path"], "")
        self.assertIsNotNone(a.info()["expiresAt"])
        self.assertNotIn(token_of(a), json.dumps(list(kids.values())))
        self.assertRefused("bad_request", lambda: self.fs.subdir("x", ttl_seconds=-5), self.fs)

    def test_revoke(self) -> None:
        self.fs.write("data/kept.txt", b"kept")
        child = self.fs.subdir("data")
        grandchild = child.subdir("", rights=["read"])
        sibling = self.fs.subdir("data", rights=["read"])
        self.assertEqual(grandchild.read("kept.txt"), b"kept")

        child.revoke()
        for dead in (child, grandchild):
            self.assertRefused("no_such_cap", dead.info, dead)
            self.assertRefused("no_such_cap", lambda: dead.read("kept.txt"), dead)
            self.assertRefused("no_such_cap", lambda: dead.write("x", b"x"), dead)
            self.assertRefused("no_such_cap", lambda: dead.list(), dead)
            self.assertRefused("no_such_cap", lambda: dead.subdir(""), dead)
        # Parent and sibling live on; files are untouched by revocation.
        self.assertEqual(sibling.read("kept.txt"), b"kept")
        self.assertEqual(self.fs.read("data/kept.txt"), b"kept")

        # Revoked and never-existing tokens are indistinguishable.
        origin = self.root.url.rsplit("/object/", 1)[0]
        never = local_cap(f"{origin}/object/{'a' * 48}")
        e_revoked = self.assertRefused("no_such_cap", child.info, child)
        e_never = self.assertRefused("no_such_cap", never.info, never)
        self.assertEqual((e_revoked.status, e_revoked.message), (e_never.status, e_never.message))
        malformed = local_cap(f"{origin}/object/NOT-A-TOKEN")
        e_bad = self.assertRefused("no_such_cap", malformed.info, malformed)
        self.assertEqual((e_bad.status, e_bad.message), (e_never.status, e_never.message))

        # revoke_child by id.
        self.fs.revoke_child(sibling.minted["id"])
        self.assertRefused("no_such_cap", sibling.info, sibling)
        self.assertEqual(self.fs.children(), [])

    # -- versions and watch ----------------------------------------------------

    def test_versions_restore_redact(self) -> None:
        t = self.fs
        t.write("plan.md", "v1")
        t.write("plan.md", "v22")
        t.delete("plan.md")
        versions, cursor = t.versions("plan.md")
        self.assertIsNone(cursor)
        self.assertEqual([v["operation"] for v in versions], ["deleted", "modified", "created"])
        deleted, _, created = versions
        self.assertEqual((created["size"], created["sha256"]), (2, hashlib.sha256(b"v1").hexdigest()))
        page, cursor = t.versions("plan.md", limit=2)
        self.assertEqual((page, cursor), (versions[:2], versions[1]["id"]))
        self.assertEqual(list(t.iter_versions("plan.md")), versions)

        self.assertEqual(t.read_version(created["id"]), b"v1")
        self.assertEqual(t.restore(deleted["id"])["size"], 3)
        self.assertEqual(t.read("plan.md"), b"v22")
        t.redact(created["id"])
        self.assertTrue(next(v for v in t.iter_versions("plan.md") if v["id"] == created["id"])["redacted"])
        self.assertRefused("not_found", lambda: t.read_version(created["id"]), t)

        # Rights and scope: a read-only cap given the history reads it but cannot restore or redact;
        # one minted without it sees only later versions; a child never reaches a version outside its subtree.
        ro = t.subdir("", rights=["read"], history="all")
        self.assertEqual(ro.read_version(versions[1]["id"]), b"v22")
        fresh = t.subdir("", rights=["read"])
        self.assertRefused("not_found", lambda: fresh.read_version(versions[1]["id"]), fresh, t)
        self.assertRefused("forbidden", lambda: ro.restore(versions[1]["id"]), ro)
        self.assertRefused("forbidden", lambda: ro.redact(versions[1]["id"]), ro)
        child = t.subdir("team")
        for bad in (versions[1]["id"], "999999999", "abc", "../1"):
            self.assertRefused("not_found", lambda: child.read_version(bad), child, t)
            self.assertRefused("not_found", lambda: child.restore(bad), child, t)
        self.assertRefused("path_escapes", lambda: child.versions("../plan.md"), child, t)

    def test_watch_follows_a_subtree_and_ends_on_revocation(self) -> None:
        t = self.fs
        t.write("marker.md", "m")
        since = t.versions("marker.md", limit=1)[0][0]["id"]
        watcher = t.subdir("w", rights=["read"])
        t.write("w/a.md", "aa")
        t.write("outside.md", "not seen")
        t.write("w/sub/b.md", "b")
        changes = watcher.watch(since=since)
        first, second = next(changes), next(changes)
        self.assertEqual([(c["operation"], c["path"], c["size"]) for c in (first, second)],
                         [("created", "a.md", 2), ("created", "sub/b.md", 1)])
        self.assertEqual(first["sha256"], hashlib.sha256(b"aa").hexdigest())
        # Live: the stream is open while the generator waits at its last yield.
        t.delete("w/a.md")
        third = next(changes)
        self.assertEqual((third["operation"], third["path"]), ("deleted", "a.md"))
        self.assertLess(int(first["version"]), int(second["version"]))
        self.assertLess(int(second["version"]), int(third["version"]))
        watcher.revoke()
        self.assertRefused("no_such_cap", lambda: next(changes), watcher)
        self.assertRefused("no_such_cap", lambda: next(watcher.watch()), watcher)
        ro = t.subdir("", rights=["write"])
        self.assertRefused("forbidden", lambda: next(ro.watch()), ro)

    def test_no_exception_or_repr_contains_a_token(self) -> None:
        fs = self.fs
        ro = fs.subdir("", rights=["read"])
        dead = fs.subdir("gone")
        dead.revoke()
        fs.write("f.txt", b"1")
        attempts: List[Tuple[FsCap, Callable[[], Any]]] = [
            (fs, lambda: fs.read("../../../etc/passwd")),
            (fs, lambda: fs.read("/etc/passwd")),
            (fs, lambda: fs.read("a//b")),
            (fs, lambda: fs.read("missing")),
            (fs, lambda: fs.write("f.txt", b"2", if_none_match="*")),
            (fs, lambda: fs.write("f.txt/x", b"2")),
            (fs, lambda: fs.subdir("", rights=["bogus"])),
            (fs, lambda: fs.list_page(cursor="\u0000bad", limit=5000)),
            (ro, lambda: ro.write("x", b"x")),
            (dead, lambda: dead.read("f.txt")),
            (dead, dead.info),
            (dead, dead.revoke),
        ]
        seen = 0
        for cap, attempt in attempts:
            try:
                attempt()
            except CapError as e:
                seen += 1
                self.assertNoToken(e, cap, fs, ro, dead, self.root)
        self.assertEqual(seen, len(attempts), "every attempt above must be refused")
        for cap in (fs, ro, dead, self.root):
            for text in (repr(cap), str(cap), f"{cap!s}"):
                for other in (fs, ro, dead, self.root):
                    self.assertNotIn(token_of(other), text)
