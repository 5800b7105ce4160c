"""capvault.langgraph.CapSaver, the LangGraph checkpointer over a cap, against LangGraph's own InMemorySaver.

Seeded random sequences of put / put_writes / get_tuple / list (limit, before,
filter) / delete_thread run on both, on R2 and on disk, and every answer must
agree (checkpoints, metadata, pending writes, parent configs). Then a real
StateGraph runs one thread across two savers (as two processes), a read-only
child cap on the thread's folder reads it and is refused put, a revoked cap
is refused everything, and the files are the TypeScript saver's format 1.

Needs the extra (``pip install "capvault[langgraph]"``): without LangGraph the
whole module is skipped. Environment: CAPVAULT_TEST_CAP (an R2 root cap) and
CAPVAULT_TEST_DISK_CAP (a disk root cap); CAPVAULT_LANGGRAPH_SEED picks the
seed (printed), CAPVAULT_LANGGRAPH_OPS the operations per sequence.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import operator
import os
import random
import sys
import threading
import types
import unittest
import uuid
from typing import Any, Dict, List, Optional, Tuple

from typing import Annotated, TypedDict  # the State's annotations are read from this module's names

from capvault import CapError, FsCap

try:
    from langgraph.checkpoint.memory import InMemorySaver

    from capvault.langgraph import CapSaver, CheckpointFileError, decode_segment, encode_segment

    MISSING = ""
except ImportError as missing:  # the extra is not installed: nothing here can run
    MISSING = f"needs the langgraph extra ({missing})"


def setUpModule() -> None:  # noqa: N802
    if MISSING:
        raise unittest.SkipTest(MISSING)

R2_CAP = os.environ.get("CAPVAULT_TEST_CAP", "").strip()
DISK_CAP = os.environ.get("CAPVAULT_TEST_DISK_CAP", "").strip()
# A fixed seed by default, so a run is the same on every machine; another with CAPVAULT_LANGGRAPH_SEED=<n>.
SEED = int(os.environ.get("CAPVAULT_LANGGRAPH_SEED") or 36)
OPS = int(os.environ.get("CAPVAULT_LANGGRAPH_OPS") or 60)

THREADS = ["alice", "thread 1", "../up", "ü/ñ"]
NAMESPACES = ["", "child:1f0"]
CHANNELS = ["messages", "count", "__pregel_tasks", "a.b"]
TASKS = ["task-a", "task-b"]


def state_graph() -> Any:
    """LangGraph's StateGraph. The local wheel mirror lacks ``langchain-protocol``, which langchain-core
    imports for chat-model streaming only: when it is missing, an import-only stand-in lets the graph
    engine load (no chat model runs here)."""
    try:
        import langchain_protocol  # noqa: F401
    except ImportError:

        def placeholder(name: str) -> Any:
            if name.startswith("__"):
                raise AttributeError(name)
            return type(name, (dict,), {})

        for name in ("langchain_protocol", "langchain_protocol.protocol"):
            stand_in = types.ModuleType(name)
            stand_in.__path__ = []  # type: ignore[attr-defined]
            stand_in.__getattr__ = placeholder  # type: ignore[method-assign]
            sys.modules[name] = stand_in
        sys.modules["langchain_protocol"].protocol = sys.modules["langchain_protocol.protocol"]  # type: ignore[attr-defined]
    from langgraph.graph import START, StateGraph

    return StateGraph, START


def areas(label: str) -> List[Tuple[str, FsCap]]:
    """A fresh folder of each backend, through its own child cap."""
    out = []
    for backend, url in (("r2", R2_CAP), ("disk", DISK_CAP)):
        root = FsCap(url, proxies={}, timeout=30)
        out.append((backend, root.subdir(f"langgraph-{label}-{uuid.uuid4().hex[:8]}", label=f"python {label}")))
    return out


def stored_thread(config: Dict[str, Any]) -> Dict[str, Any]:
    return {"configurable": {"thread_id": config["configurable"]["thread_id"]}}


def shape(found: Any) -> Any:
    """A CheckpointTuple as comparable data (None stays None)."""
    if found is None:
        return None
    return {
        "config": found.config,
        "checkpoint": found.checkpoint,
        "metadata": found.metadata,
        "parent_config": found.parent_config,
        "pending_writes": [list(w) for w in (found.pending_writes or [])],
    }


class Model:
    """Random operations, the same ones for both savers."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.counter = 0
        self.ids: Dict[Tuple[str, str], List[str]] = {}
        self.versions: Dict[Tuple[str, str], Dict[str, int]] = {}

    def value(self) -> Any:
        r = self.rng
        return r.choice(
            [
                r.randrange(-5, 10**12),
                f"text {r.random()} ü",
                [1, "two", {"three": [3.5, None, True]}],
                {"nested": {"k": r.randrange(100)}, "lc": 1},  # not plain JSON for the reviver: msgpack
                (1, 2, "tuple"),
                b"\x00\xffbytes",
                datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc),
                {1, 2, 3},
                0.25,
                "",
                {},
            ]
        )

    def new_id(self) -> str:
        self.counter += 1
        return f"1f0{self.counter:05x}-0000-6000-8000-{self.rng.randrange(16**12):012x}"

    def put(self) -> Tuple[Dict[str, Any], Dict[str, Any], Dict[str, Any], Dict[str, Any]]:
        r = self.rng
        thread, ns = r.choice(THREADS), r.choice(NAMESPACES)
        known = self.ids.setdefault((thread, ns), [])
        versions = self.versions.setdefault((thread, ns), {})
        changed = r.sample(CHANNELS, r.randrange(0, len(CHANNELS) + 1))
        new_versions = {}
        for channel in changed:
            versions[channel] = versions.get(channel, 0) + 1
            new_versions[channel] = versions[channel]
        values = {c: self.value() for c in changed if r.random() < 0.8}
        checkpoint_id = self.new_id()
        checkpoint = {
            "v": 4,
            "id": checkpoint_id,
            "ts": f"2026-12-07T07:{self.counter % 60:02d}:00+00:00",
            "channel_values": values,
            "channel_versions": dict(versions),
            "versions_seen": {"node": {c: v for c, v in versions.items() if r.random() < 0.5}},
            "updated_channels": sorted(changed),
        }
        configurable: Dict[str, Any] = {"thread_id": thread, "checkpoint_ns": ns}
        if known and r.random() < 0.8:
            configurable["checkpoint_id"] = r.choice(known)
        if r.random() < 0.3:
            configurable["user"] = "bob"  # kept in metadata, as get_checkpoint_metadata does
        config: Dict[str, Any] = {"configurable": configurable}
        if r.random() < 0.3:
            config["metadata"] = {"run_name": "graph", "__hidden": 1}
        metadata = {"source": r.choice(["input", "loop", "update"]), "step": r.randrange(-1, 4), "parents": {}}
        known.append(checkpoint_id)
        return config, checkpoint, metadata, new_versions

    def existing(self) -> Optional[Tuple[str, str, str]]:
        choices = [(t, ns, i) for (t, ns), ids in self.ids.items() for i in ids]
        return self.rng.choice(choices) if choices else None

    def put_writes(self) -> Optional[Tuple[Dict[str, Any], List[Tuple[str, Any]], str, str]]:
        found = self.existing()
        if found is None:
            return None
        r = self.rng
        thread, ns, checkpoint_id = found
        channels = ["messages", "count", "__error__", "__interrupt__", "__resume__", "branch:to:x"]
        writes = [(r.choice(channels), self.value()) for _ in range(r.randrange(0, 4))]
        config = {"configurable": {"thread_id": thread, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}}
        return config, writes, r.choice(TASKS), r.choice(["", "~__pregel_pull, node"])

    def delete(self) -> str:
        thread = self.rng.choice(THREADS)
        for key in [k for k in self.ids if k[0] == thread]:
            del self.ids[key]
        return thread

    def get_config(self) -> Dict[str, Any]:
        r = self.rng
        found = self.existing()
        if found is not None and r.random() < 0.5:
            thread, ns, checkpoint_id = found
            return {"configurable": {"thread_id": thread, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}}
        configurable: Dict[str, Any] = {"thread_id": r.choice(THREADS), "checkpoint_ns": r.choice(NAMESPACES)}
        if r.random() < 0.1:
            configurable["checkpoint_id"] = self.new_id()  # none such
        return {"configurable": configurable}

    def list_args(self) -> Tuple[Optional[Dict[str, Any]], Dict[str, Any], bool]:
        """(config, options, ordered): the order is only compared within one namespace of one thread."""
        r = self.rng
        options: Dict[str, Any] = {}
        found = self.existing()
        if found is not None and r.random() < 0.4:
            options["before"] = {"configurable": {"thread_id": found[0], "checkpoint_id": found[2]}}
        if r.random() < 0.4:
            options["filter"] = r.choice([{"source": "loop"}, {"step": 1}, {"user": "bob"}, {"source": "input", "step": -1}])
        kind = r.random()
        if kind < 0.6:
            config: Optional[Dict[str, Any]] = {
                "configurable": {"thread_id": r.choice(THREADS), "checkpoint_ns": r.choice(NAMESPACES)}
            }
            if r.random() < 0.6:
                options["limit"] = r.randrange(0, 4)
            if found is not None and r.random() < 0.1:
                config["configurable"]["checkpoint_id"] = found[2]  # type: ignore[index]
            return config, options, True
        if kind < 0.85:
            return {"configurable": {"thread_id": r.choice(THREADS)}}, options, False
        return None, options, False


@unittest.skipUnless(R2_CAP and DISK_CAP, "needs a live vault")
class ParityWithInMemorySaver(unittest.TestCase):
    def test_random_sequences_agree_with_in_memory_saver(self) -> None:
        print(f"langgraph parity: seed {SEED}, {OPS} operations a sequence (CAPVAULT_LANGGRAPH_SEED to replay)")
        counts: Dict[str, int] = {}
        answered = 0  # get_tuple and list answers that held a checkpoint: the comparison is not of empties
        for backend, cap in areas("parity"):
            rng = random.Random(f"{SEED}-{backend}")
            model = Model(rng)
            memory, saver = InMemorySaver(), CapSaver(cap, folder="threads")
            for step in range(OPS):
                op = rng.choices(["put", "put_writes", "get_tuple", "list", "delete_thread"], [30, 25, 20, 20, 5])[0]
                counts[op] = counts.get(op, 0) + 1
                where = f"{backend} seed {SEED} step {step} {op}"
                if op == "put":
                    args = model.put()
                    self.assertEqual(saver.put(*args), memory.put(*args), where)
                elif op == "put_writes":
                    writes = model.put_writes()
                    if writes is not None:
                        saver.put_writes(*writes)
                        memory.put_writes(*writes)
                elif op == "get_tuple":
                    config = model.get_config()
                    want_tuple = shape(memory.get_tuple(config))
                    self.assertEqual(shape(saver.get_tuple(config)), want_tuple, where)
                    answered += want_tuple is not None
                elif op == "list":
                    config, options, ordered = model.list_args()
                    got = [shape(t) for t in saver.list(config, **options)]
                    want = [shape(t) for t in memory.list(config, **options)]
                    if not ordered:
                        key = lambda t: json.dumps(t["config"], sort_keys=True)  # noqa: E731
                        got, want = sorted(got, key=key), sorted(want, key=key)
                    self.assertEqual(got, want, f"{where} {config} {options}")
                    answered += bool(want)
                else:
                    thread = model.delete()
                    saver.delete_thread(thread)
                    memory.delete_thread(thread)
            # Last, every thread and namespace whole, newest first.
            for thread in THREADS:
                for ns in NAMESPACES:
                    config = {"configurable": {"thread_id": thread, "checkpoint_ns": ns}}
                    self.assertEqual(
                        [shape(t) for t in saver.list(config)], [shape(t) for t in memory.list(config)], backend
                    )
            # A deleted thread leaves no file behind.
            for thread in THREADS:
                saver.delete_thread(thread)
            self.assertEqual(cap.list("threads") if cap.exists("threads") else [], [], backend)
        print(f"langgraph parity: identical answers, ops {json.dumps(counts, sort_keys=True)}, {answered} non-empty")
        self.assertGreater(answered, OPS // 4)

    def test_async_variants_answer_as_the_sync_ones(self) -> None:
        (_, cap), *_ = areas("async")
        saver = CapSaver(cap)
        model = Model(random.Random(SEED))

        async def run() -> None:
            config, checkpoint, metadata, versions = model.put()
            stored = await saver.aput(config, checkpoint, metadata, versions)
            await saver.aput_writes(stored, [("messages", "w")], "task-a")
            got = await saver.aget_tuple(stored)
            self.assertEqual(shape(got), shape(saver.get_tuple(stored)))
            self.assertEqual(got.pending_writes, [("task-a", "messages", "w")])
            listed = [t async for t in saver.alist(stored_thread(stored))]
            self.assertEqual([shape(t) for t in listed], [shape(t) for t in saver.list(stored_thread(stored))])
            self.assertEqual(len(listed), 1)
            await saver.adelete_thread(stored["configurable"]["thread_id"])
            self.assertIsNone(await saver.aget_tuple(stored))

        asyncio.run(run())


@unittest.skipUnless(R2_CAP and DISK_CAP, "needs a live vault")
class CapSaverOnACap(unittest.TestCase):
    def test_segments_are_the_typescript_savers(self) -> None:
        for key, segment in [("thread 1", "thread%201"), ("", ""), ("../x", "%2E%2E%2Fx"), ("ü", "%C3%BC"), ("a-b_C9", "a-b_C9")]:
            self.assertEqual(encode_segment(key), segment)
            self.assertEqual(decode_segment(segment), key)
        for foreign in ("a.b", "%c3%bc", "%C3", "%2", " "):
            self.assertIsNone(decode_segment(foreign))

    def test_a_state_graph_goes_on_across_two_savers_and_in_format_1(self) -> None:
        StateGraph, START = state_graph()
        class State(TypedDict):
            notes: Annotated[list, operator.add]

        def compiled(checkpointer: Any) -> Any:
            builder = StateGraph(State)
            builder.add_node("remember", lambda s: {"notes": [f"note {len(s['notes']) + 1}"]})
            builder.add_edge(START, "remember")
            return builder.compile(checkpointer=checkpointer)

        thread = {"configurable": {"thread_id": "alice"}}
        memory = compiled(InMemorySaver())
        want = [memory.invoke({"notes": ["start"]}, thread), memory.invoke({"notes": ["again"]}, thread)]
        self.assertEqual(want[1]["notes"], ["start", "note 2", "again", "note 4"])
        for backend, cap in areas("graph"):
            with self.subTest(backend=backend):
                first = compiled(CapSaver(cap.url, folder="threads", proxies={}))
                second = compiled(CapSaver(FsCap(cap.url, proxies={}), folder="threads"))  # another process, in effect
                got = [first.invoke({"notes": ["start"]}, thread), second.invoke({"notes": ["again"]}, thread)]
                self.assertEqual(got, want)
                self.assertEqual(second.get_state(thread).values, memory.get_state(thread).values)
                history = [s.metadata for s in second.get_state_history(thread)]
                self.assertEqual(history, [s.metadata for s in memory.get_state_history(thread)])
                self.assertEqual(len(history), 6)

                # The TypeScript saver's files: checkpoints, writes, and channel values apart.
                names = [e["name"] for e in cap.list("threads/alice", depth=0)]
                checkpoints = [n for n in names if n.startswith("ns-/") and n.count("/") == 1 and not n.endswith(".writes.json")]
                self.assertEqual(len(checkpoints), 6, names)
                self.assertTrue(all(n.startswith("ns-/channels/") or n.count("/") == 1 for n in names), names)
                self.assertTrue(any(n.startswith("ns-/channels/notes/") for n in names), names)
                latest = json.loads(cap.read_text(f"threads/alice/{sorted(checkpoints)[-1]}"))
                self.assertEqual(
                    sorted(latest), ["checkpoint", "checkpoint_id", "checkpoint_ns", "format", "metadata", "parent_checkpoint_id", "thread_id"]
                )
                self.assertEqual((latest["format"], latest["thread_id"], latest["checkpoint_ns"]), (1, "alice", ""))
                # Plain JSON stays JSON (the TypeScript saver's serializer reads it), its channel values left out.
                self.assertEqual(latest["checkpoint"]["type"], "json")
                self.assertEqual(latest["checkpoint"]["value"]["channel_values"], {})
                self.assertEqual(latest["metadata"]["type"], "json")
                notes = json.loads(cap.read_text(f"threads/alice/ns-/channels/notes/{latest['checkpoint']['value']['channel_versions']['notes']}.json"))
                self.assertEqual(notes["value"], {"type": "json", "value": want[1]["notes"]})

    def test_msgpack_values_are_base64_and_read_back(self) -> None:
        (_, cap), *_ = areas("msgpack")
        saver = CapSaver(cap)
        when = datetime.datetime(2026, 12, 7, tzinfo=datetime.timezone.utc)
        checkpoint = {"v": 4, "id": "1f000001-0000-6000-8000-000000000000", "ts": "t", "channel_values": {"when": when},
                      "channel_versions": {"when": 1}, "versions_seen": {}, "updated_channels": ["when"]}
        saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, checkpoint, {"step": 1}, {"when": 1})
        blob = json.loads(cap.read_text("t/ns-/channels/when/1.json"))
        self.assertEqual((blob["format"], blob["channel"], blob["version"]), (1, "when", 1))
        self.assertEqual((blob["value"]["type"], blob["value"]["encoding"]), ("msgpack", "base64"))
        self.assertEqual(saver.get_tuple({"configurable": {"thread_id": "t"}}).checkpoint["channel_values"], {"when": when})
        # A file that no longer parses is named, never skipped.
        cap.write("t/ns-/channels/when/1.json", b"{not json")
        with self.assertRaises(CheckpointFileError) as corrupt:
            saver.get_tuple({"configurable": {"thread_id": "t"}})
        self.assertEqual((corrupt.exception.code, corrupt.exception.path), ("corrupt_file", "t/ns-/channels/when/1.json"))
        for bad in (None, 7, ""):
            with self.assertRaises(TypeError):
                saver.put({"configurable": {"thread_id": bad if bad is not None else 1}}, checkpoint, {}, {})

    def test_writers_racing_on_one_checkpoint_lose_no_write(self) -> None:
        (_, cap), *_ = areas("race")
        config, checkpoint, metadata, versions = Model(random.Random(SEED)).put()
        stored = CapSaver(cap).put(config, checkpoint, metadata, versions)
        tasks = [f"task-{i}" for i in range(8)]
        errors: List[BaseException] = []

        def write(task: str) -> None:
            try:  # each its own saver and connection, as separate processes would be
                CapSaver(FsCap(cap.url, proxies={}), attempts=20).put_writes(stored, [("messages", task), ("count", 1)], task)
            except BaseException as e:  # noqa: BLE001
                errors.append(e)

        workers = [threading.Thread(target=write, args=(t,)) for t in tasks]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        self.assertEqual(errors, [])
        pending = CapSaver(cap).get_tuple(stored).pending_writes
        self.assertEqual(sorted(pending), sorted([(t, "messages", t) for t in tasks] + [(t, "count", 1) for t in tasks]))

    def test_a_read_only_child_cap_reads_one_thread_and_is_refused_put(self) -> None:
        for backend, cap in areas("readonly"):
            with self.subTest(backend=backend):
                owner = CapSaver(cap, folder="threads")
                model = Model(random.Random(SEED))
                config, checkpoint, metadata, versions = model.put()
                config["configurable"]["thread_id"] = "thread 1"
                stored = owner.put(config, checkpoint, metadata, versions)
                owner.put_writes(stored, [("messages", "hello")], "task-a")
                viewer_cap = cap.subdir(f"threads/{encode_segment('thread 1')}", rights=["read", "list"])
                viewer = CapSaver(viewer_cap, thread="thread 1")
                self.assertEqual(shape(viewer.get_tuple(stored)), shape(owner.get_tuple(stored)))
                self.assertEqual(len([*viewer.list({"configurable": {"thread_id": "thread 1"}})]), 1)
                with self.assertRaises(TypeError):
                    viewer.get_tuple({"configurable": {"thread_id": "alice"}})  # not its thread: before any request
                _, next_checkpoint, next_metadata, next_versions = model.put()
                for refused in (
                    lambda: viewer.put(stored, next_checkpoint, next_metadata, next_versions),
                    lambda: viewer.put_writes(stored, [("messages", "more")], "task-b"),
                    lambda: viewer.delete_thread("thread 1"),
                ):
                    with self.assertRaises(CapError) as forbidden:
                        refused()
                    self.assertEqual(forbidden.exception.code, "forbidden")
                self.assertEqual(shape(owner.get_tuple(stored)), shape(viewer.get_tuple(stored)))

    def test_a_revoked_cap_is_refused_everything(self) -> None:
        for backend, cap in areas("revoked"):
            with self.subTest(backend=backend):
                child = cap.subdir("threads")
                saver = CapSaver(child)
                config, checkpoint, metadata, versions = Model(random.Random(SEED)).put()
                stored = saver.put(config, checkpoint, metadata, versions)
                self.assertIsNotNone(saver.get_tuple(stored))
                child.revoke()
                for refused in (
                    lambda: saver.get_tuple(stored),
                    lambda: [*saver.list(None)],
                    lambda: saver.put(config, checkpoint, metadata, versions),
                    lambda: saver.put_writes(stored, [("messages", "late")], "task-a"),
                ):
                    with self.assertRaises(CapError) as revoked:
                        refused()
                    self.assertEqual(revoked.exception.code, "no_such_cap")
                # The files stay, for the owner.
                self.assertIsNotNone(CapSaver(cap, folder="threads").get_tuple(stored))


if __name__ == "__main__":
    unittest.main()
