"""Tests for the capvault Python client.

Three groups:

* ``WireTests`` always run: a tiny in-process HTTP server stands in for the
  vault and records exactly what the client sends (paths as query data, never
  in the URL path; no redirects followed; errors mapped; no token in any error).
* ``LiveR2Tests`` run against a real vault when ``CAPVAULT_TEST_CAP`` holds an
  R2 root cap URL with all rights.
* ``LiveDiskTests`` run when ``CAPVAULT_TEST_DISK_CAP`` holds a disk-backed
  root cap whose folder contains ``symlink-to-outside`` (a symlink leaving the
  folder) and ``skills/hermes-fs-as-cap/SKILL.md``.

Run: ``python3 -m unittest discover -v -s tests`` from clients/python.
Every live test works in its own fresh subfolder, through its own subdir cap.
"""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import os
import socket
import threading
import traceback
import unittest
import urllib.parse
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, List, Optional, Tuple

# The package under test: the installed one (npm test installs it into a fresh
# venv), or clients/python/capvault when run from clients/python.
from capvault import CapError, FsCap

R2_CAP = os.environ.get("CAPVAULT_TEST_CAP", "").strip()
DISK_CAP = os.environ.get("CAPVAULT_TEST_DISK_CAP", "").strip()

FAKE_TOKEN = "abcdefghijklmnopqrstuvwxyz234567"


def local_cap(url: str, **kw: Any) -> FsCap:
    """An FsCap that ignores *_proxy variables: the vaults under test are local."""
    return FsCap(url, proxies={}, **kw)


def token_of(cap: FsCap) -> str:
    return cap.url.rsplit("/", 1)[-1]


def all_exception_text(exc: BaseException) -> str:
    """Everything an exception would show a log, a traceback or a pickle."""
    parts = [str(exc), repr(exc), repr(exc.args)]
    parts.extend("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).splitlines())
    for name in ("code", "message", "status"):
        parts.append(repr(getattr(exc, name, None)))
    return "\n".join(parts)


class TokenHygiene:
    """Mixin: assert that nothing a cap raises or prints contains its token."""

    def assertNoToken(self, exc: BaseException, *caps: FsCap) -> None:  # noqa: N802
        text = all_exception_text(exc)
        for cap in caps:
            token = token_of(cap)
            self.assertNotIn(token, text, "an exception leaked the cap token")
        # urllib's HTTPError keeps the full URL; it must not ride along as context.
        self.assertIsNone(exc.__cause__)
        self.assertIsNone(exc.__context__)

    def assertRefused(self, code: str, fn: Callable[[], Any], *caps: FsCap) -> CapError:  # noqa: N802
        with self.assertRaises(CapError) as ctx:  # type: ignore[attr-defined]
            fn()
        self.assertEqual(ctx.exception.code, code, f"expected {code}, got {ctx.exception!r}")  # type: ignore[attr-defined]
        self.assertNoToken(ctx.exception, *caps)
        return ctx.exception


# ---------------------------------------------------------------------------
# The hermes-fs-as-cap test vector, first (the bridge document this package grew from)
# ---------------------------------------------------------------------------


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


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Records each request and answers from the test's ``respond`` function."""

    protocol_version = "HTTP/1.1"
    requests: List[Dict[str, Any]] = []
    respond: Callable[[Dict[str, Any]], Tuple[int, Dict[str, str], bytes]] = staticmethod(
        lambda req: (200, {"Content-Type": "application/json"}, b"{}")
    )

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        split = urllib.parse.urlsplit(self.path)
        record = {
            "method": self.command,
            "raw_path": self.path,
            "path": split.path,
            "query": urllib.parse.parse_qs(split.query, keep_blank_values=True),
            "raw_query": split.query,
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "body": body,
        }
        type(self).requests.append(record)
        status, headers, payload = type(self).respond(record)
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if payload:
            self.wfile.write(payload)

    do_GET = do_PUT = do_POST = do_DELETE = _handle


def _json(status: int, value: Any, headers: Optional[Dict[str, str]] = None) -> Tuple[int, Dict[str, str], bytes]:
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    return status, h, json.dumps(value).encode()


def _error(status: int, code: str, message: str) -> Tuple[int, Dict[str, str], bytes]:
    return _json(status, {"error": {"code": code, "message": message}})


class WireTests(unittest.TestCase, TokenHygiene):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
        cls.thread = threading.Thread(target=cls.server.serve_forever, daemon=True)
        cls.thread.start()
        cls.origin = f"http://127.0.0.1:{cls.server.server_address[1]}"

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.shutdown()
        cls.server.server_close()
        cls.thread.join(5)

    def setUp(self) -> None:
        _Recorder.requests = []
        _Recorder.respond = staticmethod(lambda req: _json(200, {}))
        self.fs = local_cap(f"{self.origin}/object/{FAKE_TOKEN}", timeout=5)

    def answer(self, fn: Callable[[Dict[str, Any]], Tuple[int, Dict[str, str], bytes]]) -> None:
        _Recorder.respond = staticmethod(fn)

    def test_hostile_paths_travel_verbatim_as_query_data(self) -> None:
        self.answer(lambda req: (200, {"Content-Type": "application/octet-stream"}, b"x"))
        hostile = [
            "../../../etc/passwd",
            "/etc/passwd",
            "a/../b",
            "%2e%2e/secret",
            "a b+c&d=e#f?g.txt",
            "caf\u00e9/\U0001f600",
            "~/x",
            "C:\\Windows",
            "skills/",
        ]
        for p in hostile:
            self.fs.read(p)
        self.assertEqual(len(_Recorder.requests), len(hostile))
        for sent, req in zip(hostile, _Recorder.requests):
            # The URL path is fixed; the user's path is only ever query data.
            self.assertEqual(req["path"], f"/object/{FAKE_TOKEN}/file")
            self.assertEqual(req["query"], {"path": [sent]})
            # Spaces as %20, never "+", so every parser decodes the same string.
            self.assertNotIn("+", req["raw_query"])

    def test_json_bodies_carry_paths_verbatim(self) -> None:
        self.answer(lambda req: _json(200, {"from": "x", "to": "y"}))
        self.fs.move("../a", "/b", overwrite=True)
        req = _Recorder.requests[-1]
        self.assertEqual(req["path"], f"/object/{FAKE_TOKEN}/move")
        self.assertEqual(json.loads(req["body"]), {"from": "../a", "to": "/b", "overwrite": True})
        self.fs.move("a", "b")
        self.assertEqual(json.loads(_Recorder.requests[-1]["body"]), {"from": "a", "to": "b"})

    def test_subdir_sends_only_given_fields_and_builds_child_on_same_origin(self) -> None:
        child_token = "zyxwvutsrqponmlkjihgfedcba765432"
        self.answer(lambda req: _json(201, {
            "token": child_token, "url": f"https://elsewhere.example/object/{child_token}",
            "id": "cid", "rights": ["read"], "expiresAt": None,
        }))
        child = self.fs.subdir("skills", rights=["read"], ttl_seconds=60, label="skill_view")
        self.assertEqual(json.loads(_Recorder.requests[-1]["body"]),
                         {"path": "skills", "rights": ["read"], "ttlSeconds": 60, "label": "skill_view"})
        self.fs.subdir("x")
        self.assertEqual(json.loads(_Recorder.requests[-1]["body"]), {"path": "x"})
        self.fs.subdir("q", max_bytes=1000, max_files=0)
        self.assertEqual(json.loads(_Recorder.requests[-1]["body"]), {"path": "q", "maxBytes": 1000, "maxFiles": 0})
        self.fs.subdir("h", history="all")
        self.assertEqual(json.loads(_Recorder.requests[-1]["body"]), {"path": "h", "history": "all"})
        self.assertEqual(child.url, f"{self.origin}/object/{child_token}")
        self.assertEqual(child.minted, {"id": "cid", "rights": ["read"], "expiresAt": None})
        self.assertNotIn(child_token, repr(child))
        self.assertNotIn(child_token, str(child))

    def test_error_bodies_become_cap_errors(self) -> None:
        self.answer(lambda req: _error(400, "path_escapes", "path escapes"))
        err = self.assertRefused("path_escapes", lambda: self.fs.read("../../../etc/passwd"), self.fs)
        self.assertEqual((err.status, err.message, str(err)), (400, "path escapes", "path_escapes: path escapes"))
        self.assertIsInstance(err, Exception)

        self.answer(lambda req: (404, {"Content-Type": "text/plain"}, b"nope"))
        err = self.assertRefused("not_found", lambda: self.fs.read("x"), self.fs)
        self.assertEqual(err.status, 404)

        self.answer(lambda req: (502, {}, b""))
        self.assertRefused("unavailable", lambda: self.fs.read("x"), self.fs)

        # A quota refusal without a JSON body still reads as its code.
        self.answer(lambda req: (507, {}, b""))
        self.assertRefused("quota_exceeded", lambda: self.fs.write("x", b"too much"), self.fs)

    def test_an_echoed_token_is_scrubbed_from_error_messages(self) -> None:
        self.answer(lambda req: _error(404, "no_such_cap", f"no cap {FAKE_TOKEN} here"))
        err = self.assertRefused("no_such_cap", self.fs.info, self.fs)
        self.assertIn("***", err.message)

    def test_redirects_are_refused_not_followed(self) -> None:
        self.answer(lambda req: (302, {"Location": f"{self.origin}/elsewhere"}, b""))
        err = self.assertRefused("bad_response", lambda: self.fs.read("a"), self.fs)
        self.assertEqual(err.status, 302)
        self.assertEqual([r["path"] for r in _Recorder.requests], [f"/object/{FAKE_TOKEN}/file"])

    def test_write_headers(self) -> None:
        self.answer(
            lambda req: _json(
                201,
                {
                    "size": len(req["body"]),
                    "etag": hashlib.md5(req["body"]).hexdigest(),
                    "sha256": hashlib.sha256(req["body"]).hexdigest(),
                },
            )
        )
        r = self.fs.write("a.bin", b"\x00\xff", if_none_match="*")
        req = _Recorder.requests[-1]
        self.assertEqual(req["method"], "PUT")
        self.assertEqual(req["headers"]["content-length"], "2")
        self.assertEqual(req["headers"]["content-type"], "application/octet-stream")
        self.assertEqual(req["headers"]["if-none-match"], "*")
        self.assertEqual(
            r,
            {
                "size": 2,
                "etag": hashlib.md5(b"\x00\xff").hexdigest(),
                "sha256": hashlib.sha256(b"\x00\xff").hexdigest(),
                "created": True,
            },
        )

        self.fs.write("notes.md", "h\u00e9", if_match="abc")
        req = _Recorder.requests[-1]
        self.assertEqual(req["body"], "h\u00e9".encode())
        self.assertEqual(req["headers"]["if-match"], '"abc"')
        self.assertTrue(req["headers"]["content-type"].startswith("text/markdown"))

        self.fs.write("data", io.BytesIO(b"streamed"), content_type="x/y")
        req = _Recorder.requests[-1]
        self.assertEqual((req["body"], req["headers"]["content-type"]), (b"streamed", "x/y"))

        self.answer(lambda req: _json(200, {"size": 0, "etag": "e"}))
        self.assertFalse(self.fs.write("empty", b"")["created"])
        self.assertEqual(_Recorder.requests[-1]["headers"]["content-length"], "0")

    def test_list_follows_the_cursor(self) -> None:
        pages = {None: (["a", "b"], "b"), "b": (["c"], "c"), "c": (["d"], None)}

        def respond(req: Dict[str, Any]) -> Tuple[int, Dict[str, str], bytes]:
            cursor = req["query"].get("cursor", [None])[0]
            names, nxt = pages[cursor]
            return _json(200, {"entries": [{"name": n, "type": "file"} for n in names], "cursor": nxt})

        self.answer(respond)
        self.assertEqual([e["name"] for e in self.fs.list("dir", page_size=2)], ["a", "b", "c", "d"])
        self.assertEqual([r["query"].get("limit") for r in _Recorder.requests], [["2"]] * 3)
        self.assertEqual({r["query"]["path"][0] for r in _Recorder.requests}, {"dir"})

    def test_a_repeating_cursor_does_not_loop_forever(self) -> None:
        self.answer(lambda req: _json(200, {"entries": [], "cursor": "same"}))
        self.assertRefused("bad_response", lambda: self.fs.list(), self.fs)

    def test_read_range_headers(self) -> None:
        self.answer(lambda req: (206, {"Content-Range": "bytes 2-4/10"}, b"cde"))
        self.assertEqual(self.fs.read_range("f", 2, 5), b"cde")
        self.assertEqual(_Recorder.requests[-1]["headers"]["range"], "bytes=2-4")
        self.fs.read_range("f", -3)
        self.assertEqual(_Recorder.requests[-1]["headers"]["range"], "bytes=-3")
        with self.assertRaises(ValueError):
            self.fs.read_range("f", 5, 5)

    def test_revoke_and_children_routes(self) -> None:
        self.answer(lambda req: (204, {}, b""))
        self.assertEqual(self.fs.revoke(), {})
        self.assertEqual((_Recorder.requests[-1]["method"], _Recorder.requests[-1]["path"]),
                         ("DELETE", f"/object/{FAKE_TOKEN}"))
        self.fs.revoke_child("id/with slash")
        self.assertEqual(_Recorder.requests[-1]["raw_path"], f"/object/{FAKE_TOKEN}/children/id%2Fwith%20slash")
        self.answer(lambda req: _json(202, {"revoked": True, "pendingDescendants": 2}))
        self.assertEqual(self.fs.revoke(), {"revoked": True, "pendingDescendants": 2})

    def test_children_follows_every_page(self) -> None:
        pages = {"": {"children": [{"id": "a"}], "cursor": "c1"}, "c1": {"children": [{"id": "b"}], "cursor": None}}
        self.answer(lambda req: _json(200, pages[(req["query"].get("cursor") or [""])[0]]))
        self.assertEqual([c["id"] for c in self.fs.children()], ["a", "b"])
        self.assertEqual([r["query"].get("cursor") for r in _Recorder.requests[-2:]], [None, ["c1"]])

    def test_versions_routes_quote_the_id(self) -> None:
        self.answer(lambda req: (204, {}, b""))
        self.fs.redact("1/../2")
        self.assertEqual(_Recorder.requests[-1]["raw_path"], f"/object/{FAKE_TOKEN}/versions/1%2F..%2F2/redact")
        self.answer(lambda req: _json(200, {"size": 1, "etag": "e", "sha256": "s"}))
        self.assertEqual(self.fs.restore("7")["size"], 1)
        self.assertEqual((_Recorder.requests[-1]["method"], _Recorder.requests[-1]["path"]),
                         ("POST", f"/object/{FAKE_TOKEN}/versions/7/restore"))

    def test_watch_resumes_where_the_vault_says_and_ends_with_its_refusal(self) -> None:
        def frame(version: str, path: str) -> str:
            return f"id: {version}\ndata: " + json.dumps({"path": path, "operation": "created", "size": 1,
                                                          "sha256": None, "actor": "a", "version": version}) + "\n\n"

        streams = {
            "3": ": watching\n\n" + frame("5", "a.md") + 'event: resume\ndata: {"since":"7"}\n\n',
            "7": frame("8", "b.md"),
        }
        infos = [_json(200, {"id": "x"}), _error(404, "no_such_cap", "no such capability")]

        def respond(req: Dict[str, Any]) -> Tuple[int, Dict[str, str], bytes]:
            if req["path"].endswith("/watch"):
                return 200, {"Content-Type": "text/event-stream"}, streams[req["query"]["since"][0]].encode()
            return infos.pop(0)

        self.answer(respond)
        seen: List[str] = []
        with self.assertRaises(CapError) as ctx:
            for change in self.fs.watch(since="3"):
                seen.append(change["path"])
        self.assertEqual(seen, ["a.md", "b.md"])
        self.assertEqual(ctx.exception.code, "no_such_cap")
        self.assertNoToken(ctx.exception, self.fs)
        self.assertEqual([(r["path"].rsplit("/", 1)[-1], r["query"].get("since")) for r in _Recorder.requests],
                         [("watch", ["3"]), (FAKE_TOKEN, None), ("watch", ["7"]), (FAKE_TOKEN, None)])

    def test_watch_refuses_a_stream_that_is_not_one(self) -> None:
        self.answer(lambda req: (200, {"Content-Type": "text/event-stream"}, b"data: [1]\n\n"))
        self.assertRefused("bad_response", lambda: next(self.fs.watch()), self.fs)
        self.answer(lambda req: (200, {"Content-Type": "text/event-stream"}, b"data: " + b"x" * (1024 * 1024 + 10)))
        self.assertRefused("bad_response", lambda: next(self.fs.watch()), self.fs)
        # Short lines that never end their frame pile up as one event: bounded too, not buffered without end.
        endless = b"data: " + b"x" * 1000 + b"\n"
        self.answer(lambda req: (200, {"Content-Type": "text/event-stream"}, endless * 1100))
        self.assertRefused("bad_response", lambda: next(self.fs.watch()), self.fs)

    def test_watch_refuses_a_resume_or_change_that_names_no_version(self) -> None:
        # Taken as text, a missing or numeric `since` would resume from a version that does not exist.
        for body in (b'event: resume\ndata: {"since":7}\n\n', b"event: resume\ndata: {}\n\n",
                     b'event: resume\ndata: {"since":""}\n\n',
                     b'data: {"path":"a.md","operation":"created"}\n\n'):
            self.answer(lambda req, body=body: (200, {"Content-Type": "text/event-stream"}, body))
            self.assertRefused("bad_response", lambda: next(self.fs.watch(since="3")), self.fs)
            self.assertEqual(_Recorder.requests[-1]["query"].get("since"), ["3"])


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


# ---------------------------------------------------------------------------
# Live tests against a running vault
# ---------------------------------------------------------------------------


class LiveBase(unittest.TestCase, TokenHygiene):
    ROOT_URL = ""

    def setUp(self) -> None:
        self.root = local_cap(self.ROOT_URL, timeout=30)
        folder = f"pytest-{self._testMethodName[5:30]}-{uuid.uuid4().hex[:10]}"
        self.fs = self.root.subdir(folder, label=f"python {self._testMethodName}")
        self.addCleanup(self._revoke_quietly, self.fs)

    @staticmethod
    def _revoke_quietly(cap: FsCap) -> None:
        try:
            cap.revoke()
        except CapError:
            pass


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
