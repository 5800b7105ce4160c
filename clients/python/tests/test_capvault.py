"""Tests for the capvault Python client, the Hermes vector first.

Three modules (run: ``python3 -m unittest discover -v -s tests`` from clients/python):

* here, ``HermesFsAsCapVectorTest`` and ``LiveDiskTests`` run when
  ``CAPVAULT_TEST_DISK_CAP`` holds a disk-backed root cap whose folder contains
  ``symlink-to-outside`` (a symlink leaving the folder) and
  ``skills/hermes-fs-as-cap/SKILL.md``; ``OfflineTests`` always run;
* ``test_capvault_wire``: ``WireTests`` always run: a tiny in-process HTTP server
  stands in for the vault and records exactly what the client sends (paths as
  query data, never in the URL path; no redirects followed; errors mapped; no
  token in any error);
* ``test_capvault_live``: ``LiveR2Tests`` run against a real vault when
  ``CAPVAULT_TEST_CAP`` holds an R2 root cap URL with all rights.

Every live test works in its own fresh subfolder, through its own subdir cap.
"""

from __future__ import annotations

import hashlib
import socket
import unittest

from capvault_test_support import (
    CapError,
    FsCap,
    DISK_CAP,
    FAKE_TOKEN,
    local_cap,
    all_exception_text,
    TokenHygiene,
    LiveBase,
)


@unittest.skipUnless(DISK_CAP, "set CAPVAULT_TEST_DISK_CAP to a disk-backed root cap URL to run the vector")
class HermesFsAsCapVectorTest(unittest.TestCase, TokenHygiene):
    """The document's vector verbatim, over the disk backend, with the document's error messages."""

    def test_hermes_fs_as_cap_vector(self) -> None:
        fs = local_cap(DISK_CAP)
        e = self.assertRefused("path_escapes", lambda: fs.read("../../../etc/passwd"), fs)
        self.assertEqual(e.message, "path escapes")
        e = self.assertRefused("absolute_path", lambda: fs.read("/etc/passwd"), fs)
        self.assertEqual(e.message, "absolute paths forbidden")
        e = self.assertRefused("outside_root", lambda: fs.read("symlink-to-outside"), fs)
        self.assertEqual(e.message, "resolved outside root")

        sub = fs.subdir("skills")  # a new cap
        self.addCleanup(sub.revoke)
        self.assertIsInstance(sub, FsCap)
        self.assertTrue(sub.read("hermes-fs-as-cap/SKILL.md"))
        e = self.assertRefused("path_escapes", lambda: sub.read("../other-skill/SKILL.md"), sub, fs)
        self.assertEqual(e.message, "path escapes")


# ---------------------------------------------------------------------------
# Wire tests against a recording fake vault (always run)
# ---------------------------------------------------------------------------


class OfflineTests(unittest.TestCase, TokenHygiene):
    def test_repr_and_str_hide_the_token(self) -> None:
        fs = local_cap(f"https://vault.example/base/object/{FAKE_TOKEN}")
        for text in (repr(fs), str(fs), f"{fs}", "%s %r" % (fs, fs)):
            self.assertNotIn(FAKE_TOKEN, text)
            self.assertIn("vault.example", text)
        self.assertEqual(fs.url, f"https://vault.example/base/object/{FAKE_TOKEN}")
        self.assertEqual(local_cap(fs.url + "/").url, fs.url)

    def test_bad_cap_urls_raise_without_echoing_them(self) -> None:
        for bad in (
            f"ftp://h/object/{FAKE_TOKEN}",
            f"http:///object/{FAKE_TOKEN}",
            f"http://h/objects/{FAKE_TOKEN}",
            f"http://h/object/{FAKE_TOKEN}/file",
            f"http://h/object/{FAKE_TOKEN}?x=1",
            f"http://h/object/{FAKE_TOKEN}#frag",
            f"http://h/object/{FAKE_TOKEN}%2F..",
            "not a url " + FAKE_TOKEN,
        ):
            with self.assertRaises(ValueError) as ctx:
                local_cap(bad)
            self.assertNotIn(FAKE_TOKEN, all_exception_text(ctx.exception))

    def test_unreachable_vault_is_unavailable_and_leaks_nothing(self) -> None:
        with socket.socket() as s:  # a port that was free a moment ago: connection refused
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        fs = local_cap(f"http://127.0.0.1:{port}/object/{FAKE_TOKEN}", timeout=2)
        err = self.assertRefused("unavailable", lambda: fs.read("a"), fs)
        self.assertIsNone(err.status)

    def test_timeouts_are_configurable_and_reported(self) -> None:
        with socket.socket() as listener:  # accepts, never answers
            listener.bind(("127.0.0.1", 0))
            listener.listen(1)
            fs = local_cap(f"http://127.0.0.1:{listener.getsockname()[1]}/object/{FAKE_TOKEN}", timeout=0.3)
            self.assertEqual(fs.timeout, 0.3)
            self.assertRefused("unavailable", fs.info, fs)

    def test_unpaired_surrogates_are_refused_before_sending(self) -> None:
        fs = local_cap(f"http://127.0.0.1:9/object/{FAKE_TOKEN}")
        self.assertRefused("invalid_path", lambda: fs.read("a\ud800b"), fs)

    def test_cap_error_shape(self) -> None:
        e = CapError("forbidden", "capability lacks the right for this operation", 403)
        self.assertEqual((e.code, e.message, e.status), ("forbidden", "capability lacks the right for this operation", 403))
        self.assertEqual(str(e), "forbidden: capability lacks the right for this operation")
        import pickle

        again = pickle.loads(pickle.dumps(e))
        self.assertEqual((again.code, again.message, again.status), (e.code, e.message, e.status))



@unittest.skipUnless(DISK_CAP, "set CAPVAULT_TEST_DISK_CAP to a disk-backed root cap URL to run live disk tests")
class LiveDiskTests(LiveBase):
    ROOT_URL = DISK_CAP

    def test_symlink_out_is_refused_for_every_operation(self) -> None:
        fs = self.root
        err = self.assertRefused("outside_root", lambda: fs.read("symlink-to-outside"), fs)
        self.assertEqual((err.status, err.message), (403, "resolved outside root"))
        self.assertRefused("outside_root", lambda: fs.stat("symlink-to-outside"), fs)
        # If-None-Match: * keeps this probe harmless even against a broken
        # server: following the link to an existing target cannot overwrite it.
        self.assertRefused("outside_root", lambda: fs.write("symlink-to-outside", b"pwned", if_none_match="*"), fs)
        self.assertRefused("outside_root", lambda: fs.subdir("symlink-to-outside").read("x"), fs)

    def test_round_trip_on_disk(self) -> None:
        data = bytes(range(256)) + b"\xff\xfe"
        r = self.fs.write("d/bin.dat", data)
        self.assertTrue(r["created"])
        self.assertEqual(r["etag"], hashlib.md5(data).hexdigest())
        self.assertEqual(self.fs.read("d/bin.dat"), data)
        self.assertEqual(self.fs.stat("d/bin.dat")["size"], len(data))
        self.assertEqual([(e["name"], e["type"]) for e in self.fs.list()], [("d", "dir")])
        self.fs.move("d/bin.dat", "e/bin.dat")
        self.assertEqual(self.fs.read("e/bin.dat"), data)
        self.fs.delete("e/bin.dat")
        # Both folders stay, emptied, as on R2.
        self.assertEqual([(e["name"], e["type"]) for e in self.fs.list()], [("d", "dir"), ("e", "dir")])
        ro = self.fs.subdir("", rights=["read", "list"])
        self.assertRefused("forbidden", lambda: ro.write("x", b"x"), ro)


if __name__ == "__main__":
    unittest.main()
