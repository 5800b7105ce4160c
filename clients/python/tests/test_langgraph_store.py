"""capvault.langgraph.CapStore, the LangGraph store over a cap, against LangGraph's own InMemoryStore.

Seeded random sequences of put / delete / get / search (prefix, filter, limit,
offset) / list_namespaces (prefix and suffix conditions with ``*``, max_depth,
limit, offset), some as one ``batch`` and some through ``abatch``, run on
both, on R2 and on disk, and every answer must agree (namespace, key, value;
timestamps only present and ordered). Then: a read-only child cap reads and
is refused put, a revoked cap is refused everything, bad labels and keys are
refused before any request, a corrupt item file is named, and the files are
the TypeScript CapStore's.

Deliberate differences from InMemoryStore, and how the comparison allows them:

=========================  ==========================================  ==================================
What                       InMemoryStore                               CapStore (as the TypeScript one)
=========================  ==========================================  ==================================
search order               namespaces and keys in insertion order      by namespace (labels joined by
                                                                       ``:``) then key; the comparison
                                                                       sorts InMemoryStore's full answer
                                                                       and slices offset/limit itself
``query`` without index    ignored                                     every word in the value's text
                                                                       (own test below, not compared)
emptied namespaces         may still be listed by list_namespaces      not listed (their folders go)
                                                                       compared against an InMemoryStore
                                                                       rebuilt from the live items
list_namespaces order      tuples, label by label                      labels joined by ``:`` (as TS);
                                                                       the same unless a label is a
                                                                       prefix of another (not here)
labels                     refuses "", ".", ":"                        also "/", "\\", control chars,
                                                                       a leading "~", over 255 bytes
values                     any Python object                           a JSON object only
timestamps                 datetimes of this process                   ISO strings of the file (ms)
=========================  ==========================================  ==================================

(The TypeScript store's sort uses ``localeCompare``; Python has no ICU, so
this store sorts by code point: the same for the ASCII labels used here.)

Needs the extra (``pip install "capvault[langgraph]"``): without LangGraph the
whole module is skipped. Environment: CAPVAULT_TEST_CAP and
CAPVAULT_TEST_DISK_CAP; CAPVAULT_LANGGRAPH_SEED picks the seed (printed).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import unittest
import uuid
from typing import Any, List, Tuple

from capvault import CapError, FsCap

try:
    from langgraph.store.base import GetOp, InvalidNamespaceError, ListNamespacesOp, MatchCondition, PutOp, SearchOp
    from langgraph.store.memory import InMemoryStore

    from capvault.langgraph import CapStore, CapStoreError, CheckpointFileError

    MISSING = ""
except ImportError as missing:
    MISSING = f"needs the langgraph extra ({missing})"


def setUpModule() -> None:  # noqa: N802
    if MISSING:
        raise unittest.SkipTest(MISSING)


R2_CAP = os.environ.get("CAPVAULT_TEST_CAP", "").strip()
DISK_CAP = os.environ.get("CAPVAULT_TEST_DISK_CAP", "").strip()
# A fixed seed by default, so a run is the same on every machine; another with CAPVAULT_LANGGRAPH_SEED=<n>.
SEED = int(os.environ.get("CAPVAULT_LANGGRAPH_SEED") or 36)
OPS = int(os.environ.get("CAPVAULT_LANGGRAPH_STORE_OPS") or 40)

NAMESPACES = [("users",), ("users", "alice"), ("users", "bob"), ("docs", "alice"), ("docs", "alice", "notes")]
KEYS = ["prefs", "a b", "x/y", ".hidden", "ü"]
TAGS = ["red", "blue"]


def areas(label: str) -> List[Tuple[str, FsCap]]:
    out = []
    for backend, url in (("r2", R2_CAP), ("disk", DISK_CAP)):
        root = FsCap(url, proxies={}, timeout=30)
        out.append((backend, root.subdir(f"langgraph-store-{label}-{uuid.uuid4().hex[:8]}", label=f"python {label}")))
    return out


def plain(item: Any) -> Any:
    return None if item is None else (tuple(item.namespace), item.key, item.value)


def check_times(test: unittest.TestCase, item: Any) -> None:
    if item is not None:
        test.assertIsNotNone(item.created_at)
        test.assertLessEqual(item.created_at, item.updated_at)


def random_op(rng: random.Random) -> Any:
    kind = rng.choice(["put", "put", "put", "delete", "get", "get", "search", "search", "list"])
    if kind == "put":
        value = {"n": rng.randrange(5), "tag": rng.choice(TAGS), "text": f"note {rng.randrange(100)}"}
        return PutOp(rng.choice(NAMESPACES), rng.choice(KEYS), value)
    if kind == "delete":
        return PutOp(rng.choice(NAMESPACES), rng.choice(KEYS), None)
    if kind == "get":
        return GetOp(rng.choice(NAMESPACES), rng.choice(KEYS))
    if kind == "search":
        prefix = rng.choice([(), ("users",), ("docs", "alice"), ("nobody",)])
        filter = rng.choice([None, {"tag": "red"}, {"n": {"$gte": 2}}, {"n": 3, "tag": "blue"}])
        return SearchOp(prefix, filter, rng.choice([1, 2, 10]), rng.choice([0, 0, 1, 3]))
    conditions = rng.choice(
        [
            (),
            (MatchCondition("prefix", ("users",)),),
            (MatchCondition("suffix", ("alice",)),),
            (MatchCondition("prefix", ("*", "alice")),),
        ]
    )
    return ListNamespacesOp(conditions, rng.choice([None, 1, 2]), rng.choice([100, 1, 2]), rng.choice([0, 0, 1]))


def expected(mem: Any, op: Any) -> Any:
    """InMemoryStore's answer, ordered and paged as CapStore's (see the table)."""
    if isinstance(op, SearchOp):
        every = mem.search(op.namespace_prefix, filter=op.filter, limit=10**6)
        every.sort(key=lambda i: (":".join(i.namespace), i.key))
        return [plain(i) for i in every[op.offset : op.offset + op.limit]]
    if isinstance(op, ListNamespacesOp):
        live = InMemoryStore()
        for item in mem.search((), limit=10**6):
            live.put(item.namespace, item.key, item.value)
        return [tuple(n) for n in live.batch([op])[0]]
    return None


def answer(op: Any, result: Any) -> Any:
    if isinstance(op, GetOp):
        return plain(result)
    if isinstance(op, SearchOp):
        return [plain(i) for i in result]
    if isinstance(op, ListNamespacesOp):
        return [tuple(n) for n in result]
    return result


@unittest.skipUnless(R2_CAP and DISK_CAP, "needs a live vault")
class ParityWithInMemoryStore(unittest.TestCase):
    def test_random_sequences_answer_as_in_memory_store(self) -> None:
        print(f"langgraph store seed: {SEED}")
        kinds: dict = {}
        for backend, cap in areas("parity"):
            with self.subTest(backend=backend):
                rng = random.Random(f"{SEED}-{backend}")
                store, mem = CapStore(cap, folder="mem"), InMemoryStore()
                done = 0
                while done < OPS:
                    # Mostly one op a batch; sometimes a few (reads see the store before the batch's puts).
                    ops = [random_op(rng) for _ in range(rng.choice([1, 1, 1, 3]))]
                    done += len(ops)
                    wanted = [expected(mem, op) for op in ops]
                    got = store.batch(ops) if rng.random() < 0.7 else asyncio.run(store.abatch(ops))
                    theirs = mem.batch(ops)
                    for op, w, g, t in zip(ops, wanted, got, theirs):
                        kinds[type(op).__name__] = kinds.get(type(op).__name__, 0) + 1
                        if isinstance(op, GetOp):
                            check_times(self, g)
                            self.assertEqual(plain(g), plain(t), op)
                        elif isinstance(op, PutOp):
                            self.assertIsNone(g)
                        else:
                            if isinstance(op, SearchOp):
                                for i in g:
                                    check_times(self, i)
                            self.assertEqual(answer(op, g), w, op)
        print(f"langgraph store parity: identical answers, ops {json.dumps(kinds, sort_keys=True)}")


@unittest.skipUnless(R2_CAP and DISK_CAP, "needs a live vault")
class CapStoreOnACap(unittest.TestCase):
    def test_files_updates_query_and_empty_folders(self) -> None:
        for backend, cap in areas("files"):
            with self.subTest(backend=backend):
                store = CapStore(cap)
                store.put(("users", "alice"), "notes/2026 draft", {"text": "Hello World", "n": 7})
                f = json.loads(cap.read("users/alice/notes%2F2026 draft.json"))
                self.assertEqual(f["format"], 1)
                self.assertEqual(f["value"], {"text": "Hello World", "n": 7})
                self.assertTrue(f["createdAt"].endswith("Z"))
                first = store.get(("users", "alice"), "notes/2026 draft")
                store.put(("users", "alice"), "notes/2026 draft", {"text": "bye"})
                second = store.get(("users", "alice"), "notes/2026 draft")
                self.assertEqual(second.created_at, first.created_at)
                self.assertGreaterEqual(second.updated_at, first.updated_at)
                store.put(("users", "alice"), "other", {"text": "Hello there", "n": 7})
                self.assertEqual([i.key for i in store.search(("users",), query="HELLO 7")], ["other"])
                self.assertEqual(store.search(("users",), query="world"), [])
                store.delete(("users", "alice"), "notes/2026 draft")
                store.delete(("users", "alice"), "other")
                self.assertEqual([e["name"] for e in cap.iter_list("")], [])
                self.assertEqual(store.list_namespaces(), [])

    def test_read_only_child_revoked_bad_labels_corrupt_file(self) -> None:
        for backend, cap in areas("refusals"):
            with self.subTest(backend=backend):
                store = CapStore(cap)
                store.put(("users", "alice"), "prefs", {"theme": "dark"})
                viewer = CapStore(cap.subdir("users/alice", rights=["read", "list"]), namespace=("users", "alice"))
                self.assertEqual(viewer.get(("users", "alice"), "prefs").value, {"theme": "dark"})
                self.assertEqual([i.key for i in viewer.search(())], ["prefs"])
                with self.assertRaises(CapError) as refused:
                    viewer.put(("users", "alice"), "prefs", {"theme": "light"})
                self.assertEqual(refused.exception.code, "forbidden")
                with self.assertRaises(CapStoreError) as outside:
                    viewer.get(("users", "bob"), "prefs")
                self.assertEqual(outside.exception.code, "outside_namespace")
                for label in ("", "a.b", "a:b", "a/b", "a\\b", "~root", "a\nb", "x" * 256):
                    with self.assertRaises(InvalidNamespaceError, msg=repr(label)):
                        store.put(("users", label), "k", {"v": 1})
                with self.assertRaises(CapStoreError) as bad_key:
                    store.put(("users",), "", {"v": 1})
                self.assertEqual(bad_key.exception.code, "invalid_key")
                with self.assertRaises(CapStoreError):
                    store.put(("users",), "k", {"v": object()})
                cap.write("users/alice/broken.json", b"{not json")
                with self.assertRaises(CheckpointFileError) as corrupt:
                    store.get(("users", "alice"), "broken")
                self.assertIn("users/alice/broken.json", str(corrupt.exception))
                with self.assertRaises(CheckpointFileError):
                    store.search(("users",))
                # A person's own file is not an item.
                cap.delete("users/alice/broken.json")
                cap.write("users/alice/notes.txt", b"mine")
                self.assertEqual([i.key for i in store.search(())], ["prefs"])
                child = cap.subdir("users")
                revoked = CapStore(child, namespace=("users",))
                self.assertIsNotNone(revoked.get(("users", "alice"), "prefs"))
                child.revoke()
                for call in (
                    lambda: revoked.get(("users", "alice"), "prefs"),
                    lambda: revoked.search(("users",)),
                    lambda: revoked.put(("users", "alice"), "prefs", {"theme": "x"}),
                    lambda: revoked.list_namespaces(),
                ):
                    with self.assertRaises(CapError) as gone:
                        call()
                    self.assertEqual(gone.exception.code, "no_such_cap")
                self.assertIsNotNone(store.get(("users", "alice"), "prefs"))


if __name__ == "__main__":
    unittest.main()
