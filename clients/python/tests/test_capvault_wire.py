"""The capvault client's wire tests (always run): a tiny in-process HTTP
server stands in for the vault and records exactly what the client sends
(paths as query data, never in the URL path; no redirects followed; errors
mapped; no token in any error).
"""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import threading
import unittest
import urllib.parse
from typing import Any, Callable, Dict, List, Optional, Tuple

from capvault_test_support import (
    CapError,
    FAKE_TOKEN,
    local_cap,
    TokenHygiene,
)



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

