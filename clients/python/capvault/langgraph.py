"""A LangGraph checkpointer over a cap: :class:`CapSaver`, a ``BaseCheckpointSaver``.

An optional extra (``pip install "capvault[langgraph]"``): this module alone
imports LangGraph; the rest of the package stays stdlib-only.

The files are those of the TypeScript saver (``clients/langgraph``, format 1),
so a thread written by one language reads in the other (and :class:`CapStore`, at the end, is
the store, in the TypeScript CapStore's files)::

    <folder>/<thread>/ns-<checkpoint_ns>/<checkpoint_id>.json                 the checkpoint (no channel values), metadata, parent
    <folder>/<thread>/ns-<checkpoint_ns>/<checkpoint_id>.writes.json          its pending writes, in one file
    <folder>/<thread>/ns-<checkpoint_ns>/channels/<channel>/<version>.json    one channel's value at one version

Every name is one percent-encoded path segment (:func:`encode_segment`). A
serialized value is stored as ``{"type", "value"}``: JSON kept as JSON, bytes
(Python's msgpack) as base64 with ``"encoding": "base64"``. Values that are
plain JSON are serialized as ``"json"`` when the serializer is LangGraph's
``JsonPlusSerializer`` (the default): readable in the console, and by the
TypeScript saver, whose serializer has no msgpack. Anything else goes through
the serializer (msgpack, base64 in the file), which JS cannot load.

Example::

    from capvault.langgraph import CapSaver
    graph = builder.compile(checkpointer=CapSaver(os.environ["GRAPH_CAP_URL"], folder="threads"))
    graph.invoke({"notes": ["start"]}, {"configurable": {"thread_id": "alice"}})
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import math
import random
import re
import time
from typing import Any, AsyncIterator, Dict, Iterator, List, Optional, Sequence, Tuple, Union
from urllib.parse import unquote_to_bytes

try:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import (
        WRITES_IDX_MAP,
        BaseCheckpointSaver,
        ChannelVersions,
        Checkpoint,
        CheckpointMetadata,
        CheckpointTuple,
        get_checkpoint_id,
        get_checkpoint_metadata,
    )
    from langgraph.checkpoint.serde.base import SerializerProtocol
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        'capvault.langgraph needs LangGraph: pip install "capvault[langgraph]" (langgraph-checkpoint>=4.2)'
    ) from error

from ._errors import CapError
from ._fs_cap import FsCap

__all__ = ["CapSaver", "CapStore", "CapStoreError", "CheckpointFileError", "encode_segment", "decode_segment"]

_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
_SEGMENT = re.compile(r"^(?:[A-Za-z0-9_-]|%[0-9A-F]{2})*$")

Stored = Dict[str, Any]


def encode_segment(key: str) -> str:
    """A LangGraph key as one path segment: all but ASCII letters, digits, ``-`` and ``_`` percent-encoded (UTF-8).

    As ``encodeSegment`` of clients/langgraph/files.ts: ``/`` cannot nest,
    ``.``/``..`` cannot name a folder, ``.capvault-`` cannot reach reserved names.
    """
    return "".join(chr(b) if chr(b) in _SAFE else f"%{b:02X}" for b in key.encode("utf-8"))


def decode_segment(segment: str) -> Optional[str]:
    """The key a segment encodes, or None for a name :func:`encode_segment` does not make."""
    if not _SEGMENT.match(segment):
        return None
    try:
        key = unquote_to_bytes(segment).decode("utf-8")
    except UnicodeDecodeError:
        return None
    return key if encode_segment(key) == segment else None


class CheckpointFileError(ValueError):
    """A file the saver wrote that no longer reads as one: named, never skipped, never overwritten."""

    code = "corrupt_file"

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path = path


def stored(typed: Tuple[str, Union[bytes, str]]) -> Stored:
    """``dumps_typed``'s answer as stored, as files.ts's ``stored()``."""
    type_, data = typed
    if type_ == "json":
        text = data if isinstance(data, str) else bytes(data).decode("utf-8")
        try:
            return {"type": type_, "value": json.loads(text)}
        except ValueError:
            return {"type": type_, "value": text, "encoding": "json-text"}
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    return {"type": type_, "value": base64.b64encode(raw).decode("ascii"), "encoding": "base64"}


def unstored(value: Stored) -> Tuple[str, bytes]:
    """The ``(type, bytes)`` that ``loads_typed`` takes, from a stored value."""
    encoding = value.get("encoding")
    if encoding == "base64":
        return value["type"], base64.b64decode(str(value["value"]), validate=True)
    if encoding == "json-text":
        return value["type"], str(value["value"]).encode("utf-8")
    return value["type"], json.dumps(value["value"], ensure_ascii=False).encode("utf-8")


def _plain_json(value: Any, depth: int = 0) -> bool:
    """True when ``value`` survives ``json.dumps``/``json.loads`` unchanged, and no LangChain reviver would touch it."""
    if depth > 100:
        return False
    if value is None or isinstance(value, (bool, str)):
        return True
    if type(value) is int:
        return True
    if type(value) is float:
        return math.isfinite(value)
    if type(value) is list:
        return all(_plain_json(v, depth + 1) for v in value)
    if type(value) is dict:
        return "lc" not in value and all(
            type(k) is str and _plain_json(v, depth + 1) for k, v in value.items()
        )
    return False


def _json_first(serde: SerializerProtocol, obj: Any) -> Tuple[str, bytes]:
    """Plain JSON values as ``"json"`` (readable, and loadable by the TypeScript saver); all else through ``serde``.

    Only for LangGraph's own JsonPlusSerializer (which loads ``"json"`` as such):
    any other serializer (an EncryptedSerializer, say) gets every value.
    """
    if isinstance(serde, JsonPlusSerializer) and obj is not None and _plain_json(obj):
        return "json", json.dumps(obj, ensure_ascii=False, allow_nan=False).encode("utf-8")
    return serde.dumps_typed(obj)


def _configurable(config: Optional[RunnableConfig]) -> Dict[str, Any]:
    return dict((config or {}).get("configurable") or {})


def _key(field: str, value: Any, allow_empty: bool = False) -> str:
    """Refuses a key the saver cannot keep, before any request (as keyArg of files.ts)."""
    if not isinstance(value, str):
        raise TypeError(f"{field} must be a string (got {type(value).__name__})")
    if value == "" and not allow_empty:
        raise TypeError(f"{field} must not be empty")
    return value


def _join(*parts: str) -> str:
    return "/".join(p for p in parts if p != "")


def _ns_folder(ns: str) -> str:
    return "ns-" + encode_segment(ns)


def _dump(value: Any) -> bytes:
    return (json.dumps(value, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def _is_stored(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("type"), str) and "value" in value


def _parse(data: bytes, path: str) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except ValueError:
        raise CheckpointFileError(path, "it is not JSON") from None


def _parse_checkpoint(data: bytes, path: str) -> Dict[str, Any]:
    f = _parse(data, path)
    ok = (
        isinstance(f, dict)
        and f.get("format") == 1
        and isinstance(f.get("thread_id"), str)
        and isinstance(f.get("checkpoint_ns"), str)
        and isinstance(f.get("checkpoint_id"), str)
        and (f.get("parent_checkpoint_id") is None or isinstance(f.get("parent_checkpoint_id"), str))
        and _is_stored(f.get("checkpoint"))
        and _is_stored(f.get("metadata"))
    )
    if not ok:
        raise CheckpointFileError(path, "it is not a checkpoint file of format 1")
    return f


def _parse_channel(data: bytes, path: str) -> Dict[str, Any]:
    f = _parse(data, path)
    if not (
        isinstance(f, dict)
        and f.get("format") == 1
        and isinstance(f.get("channel"), str)
        and (f.get("value") is None or _is_stored(f.get("value")))
    ):
        raise CheckpointFileError(path, "it is not a channel file of format 1")
    return f


def _parse_writes(data: bytes, path: str) -> List[Dict[str, Any]]:
    f = _parse(data, path)
    ok = (
        isinstance(f, dict)
        and f.get("format") == 1
        and isinstance(f.get("writes"), list)
        and all(
            isinstance(w, dict)
            and isinstance(w.get("task_id"), str)
            and type(w.get("idx")) is int
            and isinstance(w.get("channel"), str)
            and isinstance(w.get("task_path"), str)
            and _is_stored(w.get("value"))
            for w in f["writes"]
        )
    )
    if not ok:
        raise CheckpointFileError(path, "it is not a writes file of format 1")
    return list(f["writes"])



def _write_over(cap: Any, path: str, body: bytes, read: Optional[bytes], attempt: int, attempts: int) -> bool:
    """Writes ``body`` only over exactly the bytes read (``None``: only if still absent), by their sha256.

    True when it landed; False when another writer's version came between and
    the caller should read theirs and apply its change again (after a short,
    random wait, so racing writers spread out); raises past ``attempts``.
    """
    try:
        if read is None:
            cap.write(path, body, content_type="application/json", if_none_match="*")
        else:
            cap.write(path, body, content_type="application/json", if_match="sha256:" + hashlib.sha256(read).hexdigest())
        return True
    except CapError as e:
        if e.code != "precondition_failed" or attempt >= attempts:
            raise
    time.sleep(random.random() * 0.01 * attempt)
    return False

class CapSaver(BaseCheckpointSaver):
    """A LangGraph checkpointer whose threads are folders of a cap, in the TypeScript saver's format 1.

    ``cap`` is a cap URL or an :class:`~capvault.FsCap`. ``folder`` is the
    cap's folder holding the threads (default: its root). ``thread`` makes the
    cap (or ``folder``) that one thread's folder, as a child cap minted on
    ``<folder>/<thread>`` is; any other thread id is then refused (TypeError)
    before any request. ``attempts`` bounds the retries of a writes file's
    read-modify-write that lost a race (default 8).

    What the cap refuses raises :class:`~capvault.CapError` with the vault's
    code: ``forbidden`` (a read-only cap's ``put``), ``no_such_cap`` (revoked).
    """

    def __init__(
        self,
        cap: Union[str, FsCap],
        *,
        folder: str = "",
        thread: Optional[str] = None,
        serde: Optional[SerializerProtocol] = None,
        attempts: int = 8,
        **cap_options: Any,
    ) -> None:
        super().__init__(serde=serde)
        self.cap = FsCap(cap, **cap_options) if isinstance(cap, str) else cap
        self.folder = folder.rstrip("/")
        self.attempts = attempts
        self.thread = None if thread is None else _key("thread", thread)

    # ------------------------------------------------------------------ reading

    def get_tuple(self, config: RunnableConfig) -> Optional[CheckpointTuple]:
        conf = _configurable(config)
        thread_id = conf.get("thread_id")
        if thread_id is None:
            return None
        _key("thread_id", thread_id)
        ns = _key("checkpoint_ns", conf.get("checkpoint_ns", ""), allow_empty=True)
        wanted = get_checkpoint_id(config)
        if wanted:
            _key("checkpoint_id", wanted)
            checkpoint_id: Optional[str] = wanted
        else:
            ids = self._checkpoint_ids(thread_id, ns)
            checkpoint_id = ids[0] if ids else None
        if checkpoint_id is None:
            return None
        f = self._read_checkpoint(thread_id, ns, checkpoint_id)
        if f is None:
            return None
        found = self._tuple(f)
        # Asked by id, the answer carries the config it was asked with, as InMemorySaver's does.
        return found._replace(config=config) if wanted else found

    def list(
        self,
        config: Optional[RunnableConfig],
        *,
        filter: Optional[Dict[str, Any]] = None,
        before: Optional[RunnableConfig] = None,
        limit: Optional[int] = None,
    ) -> Iterator[CheckpointTuple]:
        conf = _configurable(config)
        thread_id = conf.get("thread_id") if config else None
        ns = conf.get("checkpoint_ns") if config else None
        only_id = get_checkpoint_id(config) if config else None
        if thread_id is not None:
            _key("thread_id", thread_id)
        if ns is not None:
            _key("checkpoint_ns", ns, allow_empty=True)
        if only_id:
            _key("checkpoint_id", only_id)
        before_id = get_checkpoint_id(before) if before else None
        if before_id:
            _key("checkpoint_id", before_id)
        threads = [thread_id] if thread_id is not None else self._threads()
        for thread in threads:
            namespaces = [ns] if ns is not None else self._namespaces(thread)
            for namespace in namespaces:
                for checkpoint_id in self._checkpoint_ids(thread, namespace):
                    if only_id and checkpoint_id != only_id:
                        continue
                    if before_id and checkpoint_id >= before_id:
                        continue
                    f = self._read_checkpoint(thread, namespace, checkpoint_id)
                    if f is None:
                        continue
                    metadata = self._load(f["metadata"], f, "metadata")
                    if filter and not all(metadata.get(k) == v for k, v in filter.items()):
                        continue
                    if limit is not None:
                        if limit <= 0:
                            return
                        limit -= 1
                    yield self._tuple(f, metadata)

    # ------------------------------------------------------------------ writing

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        conf = _configurable(config)
        thread_id = conf.get("thread_id")
        if thread_id is None:
            raise ValueError('Failed to put checkpoint: the config\'s "configurable" has no "thread_id" field.')
        _key("thread_id", thread_id)
        ns = _key("checkpoint_ns", conf.get("checkpoint_ns", ""), allow_empty=True)
        checkpoint_id = _key("checkpoint_id", checkpoint["id"])
        parent = conf.get("checkpoint_id")
        rest = dict(checkpoint)
        values: Dict[str, Any] = dict(rest.pop("channel_values", None) or {})
        # Channel values first, one file per changed version, so a checkpoint never names a value not there yet.
        for channel, version in new_versions.items():
            blob: Dict[str, Any] = {"format": 1, "channel": channel, "version": version, "value": None}
            if channel in values:
                blob["value"] = stored(_json_first(self.serde, values[channel]))
            self.cap.write(self._blob_path(thread_id, ns, channel, version), _dump(blob), content_type="application/json")
        f = {
            "format": 1,
            "thread_id": thread_id,
            "checkpoint_ns": ns,
            "checkpoint_id": checkpoint_id,
            "parent_checkpoint_id": parent if isinstance(parent, str) and parent != "" else None,
            "checkpoint": stored(_json_first(self.serde, {**rest, "channel_values": {}})),
            "metadata": stored(_json_first(self.serde, get_checkpoint_metadata(config, metadata))),
        }
        # One write: the vault stores a file whole or not at all.
        self.cap.write(
            self._path(thread_id, ns, encode_segment(checkpoint_id) + ".json"), _dump(f), content_type="application/json"
        )
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}}

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[Tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        conf = _configurable(config)
        thread_id = conf.get("thread_id")
        checkpoint_id = conf.get("checkpoint_id")
        if thread_id is None:
            raise ValueError('Failed to put writes: the config\'s "configurable" has no "thread_id" field.')
        if checkpoint_id is None:
            raise ValueError('Failed to put writes: the config\'s "configurable" has no "checkpoint_id" field.')
        _key("thread_id", thread_id)
        ns = _key("checkpoint_ns", conf.get("checkpoint_ns", ""), allow_empty=True)
        _key("checkpoint_id", checkpoint_id)
        _key("task_id", task_id)
        records = [
            {
                "task_id": task_id,
                "idx": WRITES_IDX_MAP.get(channel, idx),
                "channel": channel,
                "task_path": task_path or "",
                "value": stored(_json_first(self.serde, value)),
            }
            for idx, (channel, value) in enumerate(writes)
        ]

        def change(current: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
            had = {(w["task_id"], w["idx"]) for w in current}
            out = list(current)
            for record in records:
                key = (record["task_id"], record["idx"])
                # As InMemorySaver: a regular write (idx >= 0) is kept once; a special one (error, interrupt...) replaces.
                if record["idx"] >= 0 and key in had:
                    continue
                at = next((i for i, w in enumerate(out) if (w["task_id"], w["idx"]) == key), None)
                if at is None:
                    out.append(record)
                else:
                    out[at] = record
            return out

        self._update(self._path(thread_id, ns, encode_segment(checkpoint_id) + ".writes.json"), change)

    def delete_thread(self, thread_id: str) -> None:
        _key("thread_id", thread_id)
        thread = self._thread_path(thread_id)
        # File by file, then every folder that held them, deepest first (each empty by then).
        folders = set()
        for entry in self._entries(thread, 0):
            if entry.get("type") != "file":
                continue
            name = entry["name"]
            self._ignore_missing(self.cap.delete, _join(thread, name))
            parts = name.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                folders.add("/".join(parts[:i]))
        for folder in sorted(folders, key=lambda f: (-f.count("/"), f)):
            self._ignore_missing(self.cap.rmtree, _join(thread, folder))
        # A one-thread saver's folder may be its cap's root, which stays.
        if thread != "":
            self._ignore_missing(self.cap.rmtree, thread)

    def get_next_version(self, current: Optional[Union[int, float, str]], channel: None = None) -> Any:
        """Integer versions, as the TypeScript saver's; a thread with InMemorySaver-style string versions goes on in kind."""
        if isinstance(current, str):
            return f"{int(current.split('.')[0]) + 1:032}.{random.random():016}"
        return 1 if current is None else int(current) + 1

    # ------------------------------------------------------------------ async: the sync calls in a worker thread

    async def aget_tuple(self, config: RunnableConfig) -> Optional[CheckpointTuple]:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: Optional[RunnableConfig],
        *,
        filter: Optional[Dict[str, Any]] = None,
        before: Optional[RunnableConfig] = None,
        limit: Optional[int] = None,
    ) -> AsyncIterator[CheckpointTuple]:
        found = await asyncio.to_thread(lambda: [*self.list(config, filter=filter, before=before, limit=limit)])
        for item in found:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[Tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    # ------------------------------------------------------------------ internals

    def _tuple(self, f: Dict[str, Any], metadata: Any = None) -> CheckpointTuple:
        checkpoint = dict(self._load(f["checkpoint"], f, "checkpoint"))
        checkpoint["channel_values"] = self._channel_values(f, checkpoint.get("channel_versions") or {})
        thread_id, ns, parent = f["thread_id"], f["checkpoint_ns"], f["parent_checkpoint_id"]
        return CheckpointTuple(
            config={"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": f["checkpoint_id"]}},
            checkpoint=checkpoint,  # type: ignore[arg-type]
            metadata=metadata if metadata is not None else self._load(f["metadata"], f, "metadata"),
            parent_config=(
                {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": parent}}
                if parent
                else None
            ),
            pending_writes=[
                (w["task_id"], w["channel"], self.serde.loads_typed(unstored(w["value"])))
                for w in self._writes(thread_id, ns, f["checkpoint_id"])
            ],
        )

    def _channel_values(self, f: Dict[str, Any], versions: Dict[str, Any]) -> Dict[str, Any]:
        """Each channel at the version the checkpoint names; a version stored without a value (or never) is absent."""
        values: Dict[str, Any] = {}
        for channel, version in versions.items():
            path = self._blob_path(f["thread_id"], f["checkpoint_ns"], channel, version)
            data = self._read(path)
            if data is None:
                continue
            blob = _parse_channel(data, path)
            if blob["value"] is not None:
                values[channel] = self.serde.loads_typed(unstored(blob["value"]))
        return values

    def _writes(self, thread: str, ns: str, checkpoint_id: str) -> List[Dict[str, Any]]:
        path = self._path(thread, ns, encode_segment(checkpoint_id) + ".writes.json")
        data = self._read(path)
        return [] if data is None else _parse_writes(data, path)

    def _read_checkpoint(self, thread: str, ns: str, checkpoint_id: str) -> Optional[Dict[str, Any]]:
        path = self._path(thread, ns, encode_segment(checkpoint_id) + ".json")
        data = self._read(path)
        return None if data is None else _parse_checkpoint(data, path)

    def _checkpoint_ids(self, thread: str, ns: str) -> List[str]:
        """A namespace's checkpoint ids, newest first (uuid6: their order is their time)."""
        ids = []
        for entry in self._entries(_join(self._thread_path(thread), _ns_folder(ns)), 1):
            name = entry.get("name", "")
            if entry.get("type") != "file" or not name.endswith(".json") or name.endswith(".writes.json"):
                continue
            checkpoint_id = decode_segment(name[: -len(".json")])
            if checkpoint_id is not None:
                ids.append(checkpoint_id)
        return sorted(ids, reverse=True)

    def _namespaces(self, thread: str) -> List[str]:
        out = []
        for entry in self._entries(self._thread_path(thread), 1):
            name = entry.get("name", "")
            if entry.get("type") == "dir" and name.startswith("ns-"):
                ns = decode_segment(name[3:])
                if ns is not None:
                    out.append(ns)
        return out

    def _threads(self) -> List[str]:
        if self.thread is not None:
            return [self.thread]
        out = []
        for entry in self._entries(self.folder, 1):
            if entry.get("type") == "dir":
                thread = decode_segment(entry.get("name", ""))
                if thread:
                    out.append(thread)
        return out

    def _entries(self, path: str, depth: int) -> List[Dict[str, Any]]:
        """A folder's entries, every page; a folder that is not there has none."""
        try:
            return [*self.cap.iter_list(path, page_size=1000, depth=depth)]
        except CapError as e:
            if e.code == "not_found":
                return []
            raise

    def _read(self, path: str) -> Optional[bytes]:
        try:
            return self.cap.read(path)
        except CapError as e:
            if e.code == "not_found":
                return None
            raise

    @staticmethod
    def _ignore_missing(fn: Any, path: str) -> None:
        try:
            fn(path)
        except CapError as e:
            if e.code != "not_found":
                raise

    def _load(self, value: Stored, f: Dict[str, Any], field: str) -> Any:
        try:
            return self.serde.loads_typed(unstored(value))
        except Exception as e:
            raise CheckpointFileError(
                f"{f['thread_id']}/{f['checkpoint_id']}", f"its {field} does not deserialize ({e})"
            ) from None

    def _update(self, path: str, change: Any) -> None:
        """Read-modify-write of a writes file, only over the bytes read; retried when another writer came between."""
        attempt = 1
        while True:
            data = self._read(path)
            current = [] if data is None else _parse_writes(data, path)
            body = _dump({"format": 1, "writes": change(current)})
            if _write_over(self.cap, path, body, data, attempt, self.attempts):
                return
            attempt += 1

    def _thread_path(self, thread: str) -> str:
        if self.thread is not None:
            if thread != self.thread:
                raise TypeError("this saver holds one thread only, and not that one")
            return self.folder
        return _join(self.folder, encode_segment(thread))

    def _blob_path(self, thread: str, ns: str, channel: str, version: Any) -> str:
        return self._path(thread, ns, f"channels/{encode_segment(channel)}/{encode_segment(str(version))}.json")

    def _path(self, thread: str, ns: str, name: str) -> str:
        return _join(self._thread_path(thread), _ns_folder(ns), name)


# ---------------------------------------------------------------------------- the store
#
# CapStore: the TypeScript CapStore's files (clients/langgraph/cap-store*.ts), read and written from Python.

from datetime import datetime, timezone  # noqa: E402

from langgraph.store.base import (  # noqa: E402
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

_CONTROL = re.compile("[\u0000-\u001f\u007f\u0085\u2028\u2029]")
_MAX_SEGMENT_BYTES = 255
_SUFFIX = ".json"


class CapStoreError(ValueError):
    """What CapStore refuses itself, as the TypeScript CapStoreError: ``code`` is
    ``invalid_key``, ``invalid_value``, ``outside_namespace`` or ``scan_limit``
    (a corrupt item file is a :class:`CheckpointFileError`, code ``corrupt_file``)."""

    def __init__(self, code: str, message: str, path: Optional[str] = None) -> None:
        super().__init__(message if path is None else f"{path}: {message}")
        self.code = code
        self.path = path


def _check_label(label: Any, where: Any) -> None:
    """As checkLabel of cap-store-names.ts: one folder name, or LangGraph's InvalidNamespaceError."""
    if not isinstance(label, str):
        why: Optional[str] = f"must be a string, not {type(label).__name__}"
    elif label == "":
        why = "must not be empty"
    elif re.search(r"[.:/\\]", label):
        why = "must not contain '.', ':', '/' or '\\'"
    elif _CONTROL.search(label):
        why = "must not contain control characters"
    elif re.search("[\ud800-\udfff]", label):
        why = "must not contain an unpaired surrogate"
    elif label.startswith("~"):
        why = "must not start with '~'"
    elif len(label.encode("utf-8")) > _MAX_SEGMENT_BYTES:
        why = f"must be at most {_MAX_SEGMENT_BYTES} UTF-8 bytes"
    else:
        why = None
    if why is not None:
        raise InvalidNamespaceError(f"Invalid namespace label {label!r} in {where!r}: {why}.")


def _check_namespace(namespace: Any, allow_empty: bool) -> Tuple[str, ...]:
    if not isinstance(namespace, (tuple, list)):
        raise InvalidNamespaceError("A namespace must be a tuple of labels.")
    if len(namespace) == 0 and not allow_empty:
        raise InvalidNamespaceError("Namespace cannot be empty.")
    for label in namespace:
        _check_label(label, tuple(namespace))
    return tuple(namespace)


def _is_label(name: str) -> bool:
    try:
        _check_label(name, (name,))
        return True
    except InvalidNamespaceError:
        return False


def encode_key(key: Any) -> str:
    """A key as a file name (without ``.json``), as encodeKey of cap-store-names.ts."""
    if not isinstance(key, str):
        raise CapStoreError("invalid_key", f"a key must be a string, not {type(key).__name__}")
    if key == "":
        raise CapStoreError("invalid_key", "a key must not be empty")
    if re.search("[\ud800-\udfff]", key):
        raise CapStoreError("invalid_key", "a key must not contain an unpaired surrogate")
    out = ""
    for ch in key:
        unsafe = ch in "%/\\" or _CONTROL.match(ch) is not None or (out == "" and ch == ".")
        out += "".join(f"%{b:02X}" for b in ch.encode("utf-8")) if unsafe else ch
    if len((out + _SUFFIX).encode("utf-8")) > _MAX_SEGMENT_BYTES:
        raise CapStoreError("invalid_key", f"a key's file name must be at most {_MAX_SEGMENT_BYTES} UTF-8 bytes")
    return out


def key_of_file_name(name: str) -> Optional[str]:
    """The key a file name stands for, or None for a name CapStore never writes."""
    if not name.endswith(_SUFFIX):
        return None
    stem = name[: -len(_SUFFIX)]
    if stem == "" or re.search(r"%(?![0-9A-F]{2})", stem):
        return None
    try:
        key = unquote_to_bytes(stem).decode("utf-8")
        return key if encode_key(key) == stem else None
    except (UnicodeDecodeError, CapStoreError):
        return None


_OPERATORS = {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"}


def _number(v: Any) -> float:
    """JavaScript's Number() for the values JSON holds (NaN where it has none), so filters judge as the TS store's."""
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return float(v)
    if v is None:
        return 0.0
    if isinstance(v, str):
        s = v.strip()
        if s == "":
            return 0.0
        try:
            return float(s)
        except ValueError:
            return math.nan
    return math.nan


def _same(a: Any, b: Any) -> bool:
    """JavaScript's ``===`` over JSON values: objects and arrays never equal; True is not 1."""
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def _compare(actual: Any, wanted: Any) -> bool:
    if not isinstance(wanted, dict) or not all(k in _OPERATORS for k in wanted):
        return _same(actual, wanted)
    for op, operand in wanted.items():
        if op == "$eq":
            ok = _same(actual, operand)
        elif op == "$ne":
            ok = not _same(actual, operand)
        elif op in ("$gt", "$gte", "$lt", "$lte"):
            x, y = _number(actual), _number(operand)
            ok = {"$gt": x > y, "$gte": x >= y, "$lt": x < y, "$lte": x <= y}[op]
        elif op == "$in":
            ok = isinstance(operand, list) and any(_same(actual, o) for o in operand)
        else:
            ok = not isinstance(operand, list) or not any(_same(actual, o) for o in operand)
        if not ok:
            return False
    return True


def _matches_filter(value: Dict[str, Any], filter: Dict[str, Any]) -> bool:
    return all(_compare(value.get(field), wanted) for field, wanted in filter.items())


def _query_words(query: Optional[str]) -> List[str]:
    return [w for w in (query or "").lower().split() if w]


def _matches_query(value: Any, words: List[str]) -> bool:
    """Every word in the value's strings, numbers and booleans (not field names), case-insensitively."""
    if not words:
        return True
    texts: List[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, str):
            texts.append(v.lower())
        elif isinstance(v, bool):
            texts.append("true" if v else "false")
        elif isinstance(v, (int, float)):
            texts.append(json.dumps(v))
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)

    walk(value)
    text = "\n".join(texts)
    return all(w in text for w in words)


def _matches_condition(namespace: Tuple[str, ...], match_type: str, path: Sequence[str]) -> bool:
    if match_type not in ("prefix", "suffix"):
        raise ValueError(f"Unsupported match type: {match_type}")
    if len(path) > len(namespace):
        return False
    start = 0 if match_type == "prefix" else len(namespace) - len(path)
    return all(label == "*" or namespace[start + i] == label for i, label in enumerate(path))


def _iso(when: datetime) -> str:
    """As JavaScript's toISOString: UTC, milliseconds, ``Z``."""
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def _parse_date(text: Any) -> Optional[datetime]:
    if not isinstance(text, str):
        return None
    try:
        parsed = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=timezone.utc)


def _parse_item(data: bytes, path: str) -> Dict[str, Any]:
    try:
        f = json.loads(data.decode("utf-8"))
    except ValueError:
        raise CheckpointFileError(path, "not a CapStore item: not UTF-8 JSON") from None
    if not isinstance(f, dict):
        why: Optional[str] = "not a JSON object"
    elif f.get("format") != 1:
        why = f"format {json.dumps(f.get('format'))} is not one this CapStore reads (1)"
    elif not isinstance(f.get("value"), dict):
        why = "its value is not a JSON object"
    elif _parse_date(f.get("createdAt")) is None or _parse_date(f.get("updatedAt")) is None:
        why = "createdAt and updatedAt must be ISO 8601 dates"
    else:
        why = None
    if why is not None:
        raise CheckpointFileError(path, f"not a CapStore item: {why}")
    return f


def _starts_with(namespace: Sequence[str], prefix: Sequence[str]) -> bool:
    return len(prefix) <= len(namespace) and all(namespace[i] == label for i, label in enumerate(prefix))


def _count(name: str, value: Any, fallback: int) -> int:
    if value is None:
        return fallback
    if type(value) is not int or value < 0:
        raise ValueError(f"{name} must be a non-negative integer (got {value!r})")
    return value


class CapStore(BaseStore):
    """A LangGraph store (``BaseStore``) over a cap, in the TypeScript CapStore's files.

    A namespace is a folder, one label one folder name, and an item is
    ``<key>.json`` in it (``{"format": 1, "value", "createdAt", "updatedAt"}``),
    so ``("users", "alice")``, ``"prefs"`` is ``users/alice/prefs.json``.
    A batch's reads see the store as it was before the batch; its puts then
    apply, the last put of a key winning. ``namespace`` makes the cap (or
    ``folder``) that namespace's folder, as a child cap minted on it is.
    """

    def __init__(
        self,
        cap: Union[str, FsCap],
        *,
        folder: str = "",
        namespace: Sequence[str] = (),
        attempts: int = 8,
        scan_limit: int = 10_000,
        **cap_options: Any,
    ) -> None:
        self.cap = FsCap(cap, **cap_options) if isinstance(cap, str) else cap
        self.folder = folder.rstrip("/")
        self.root = _check_namespace(tuple(namespace), True)
        self.attempts = max(1, attempts)
        self.scan_limit = scan_limit

    def batch(self, ops: Any) -> List[Result]:
        ops = list(ops)
        # Every op judged before the first request, so a bad one changes nothing.
        steps = [self._step(op) for op in ops]
        results: List[Result] = [None if s[0] == "put" else self._read(s) for s in steps]
        puts: Dict[str, Any] = {}
        for s in steps:
            if s[0] == "put":
                puts[s[3]] = s  # as InMemoryStore: one per key, the last one's value in the first one's place
        for s in puts.values():
            if s[4] is None:
                self._delete(s)
            else:
                self._put(s)
        return results

    async def abatch(self, ops: Any) -> List[Result]:
        ops = list(ops)
        return await asyncio.to_thread(self.batch, ops)

    # ------------------------------------------------------------------ internals

    def _step(self, op: Op) -> Tuple[Any, ...]:
        if isinstance(op, GetOp):
            ns = _check_namespace(op.namespace, False)
            self._within(ns)
            return ("get", ns, op.key, self._item_path(ns, op.key))
        if isinstance(op, SearchOp):
            prefix = _check_namespace(op.namespace_prefix, True)
            if not _starts_with(self.root, prefix):
                self._within(prefix)
            if op.filter is not None and not isinstance(op.filter, dict):
                raise TypeError("a search filter must be a dict of fields")
            return (
                "search",
                prefix,
                op.filter or None,
                _query_words(op.query),
                _count("limit", op.limit, 10),
                _count("offset", op.offset, 0),
            )
        if isinstance(op, PutOp):
            ns = _check_namespace(op.namespace, False)
            self._within(ns)
            path = self._item_path(ns, op.key)
            if op.value is not None:
                if not isinstance(op.value, dict):
                    raise CapStoreError("invalid_value", "a value must be a dict (None deletes)")
                try:
                    json.dumps(op.value, allow_nan=False)
                except (TypeError, ValueError) as e:
                    raise CapStoreError("invalid_value", f"a value must be JSON: {e}") from None
            return ("put", ns, op.key, path, op.value)
        if isinstance(op, ListNamespacesOp):
            conditions = list(op.match_conditions or ())
            if op.max_depth is not None and not (type(op.max_depth) is int and op.max_depth >= 1):
                raise ValueError(f"max_depth must be an integer of at least 1 (got {op.max_depth!r})")
            return (
                "list",
                conditions,
                op.max_depth,
                None if op.limit is None else _count("limit", op.limit, 0),
                _count("offset", op.offset, 0),
            )
        raise TypeError(f"not a store operation: {type(op).__name__}")

    def _read(self, s: Tuple[Any, ...]) -> Result:
        if s[0] == "get":
            found = self._read_item(s[3])
            return None if found is None else self._item(Item, s[1], s[2], found[0])
        if s[0] == "search":
            return self._search(*s[1:])
        return self._list_namespaces(*s[1:])

    @staticmethod
    def _item(cls: Any, ns: Tuple[str, ...], key: str, f: Dict[str, Any]) -> Any:
        return cls(
            namespace=ns,
            key=key,
            value=f["value"],
            created_at=_parse_date(f["createdAt"]),
            updated_at=_parse_date(f["updatedAt"]),
        )

    def _search(
        self, prefix: Tuple[str, ...], filter: Optional[Dict[str, Any]], words: List[str], limit: int, offset: int
    ) -> List[SearchItem]:
        if limit == 0:
            return []
        listed = sorted(self._walk(self._deeper(prefix)), key=lambda x: (":".join(x[0]), x[1]))
        judged = bool(filter) or bool(words)
        candidates = listed if judged else listed[offset : offset + limit]
        skipped = 0 if judged else offset
        found: List[SearchItem] = []
        for ns, key, path in candidates:
            read = self._read_item(path)
            if read is None:  # gone since the listing
                continue
            value = read[0]["value"]
            if judged and not ((not filter or _matches_filter(value, filter)) and _matches_query(value, words)):
                continue
            if skipped < offset:
                skipped += 1
                continue
            found.append(self._item(SearchItem, ns, key, read[0]))
            if len(found) == limit:
                break
        return found

    def _list_namespaces(
        self, conditions: List[Any], max_depth: Optional[int], limit: Optional[int], offset: int
    ) -> List[Tuple[str, ...]]:
        prefix: List[str] = []
        first = next((c.path for c in conditions if c.match_type == "prefix"), ())
        for label in first:
            if label == "*" or not _is_label(label):
                break
            prefix.append(label)
        if not _starts_with(prefix, self.root) and not _starts_with(self.root, prefix):
            return []
        seen = set()
        for ns, _key, _path in self._walk(self._deeper(tuple(prefix))):
            if not all(_matches_condition(ns, c.match_type, tuple(c.path)) for c in conditions):
                continue
            seen.add(ns if max_depth is None else ns[:max_depth])
        ordered = sorted(seen, key=lambda n: ":".join(n))
        return ordered[offset : None if limit is None else offset + limit]

    def _walk(self, prefix: Tuple[str, ...]) -> List[Tuple[Tuple[str, ...], str, str]]:
        listed = []
        files = 0
        folder = self._folder_path(prefix)
        try:
            for entry in self.cap.iter_list(folder, page_size=1000, depth=0):
                files += 1
                if files > self.scan_limit:
                    raise CapStoreError(
                        "scan_limit",
                        f"more than {self.scan_limit} files below; narrow the namespace or raise scan_limit",
                        folder,
                    )
                if entry.get("type") != "file":
                    continue
                parts = entry["name"].split("/")
                key = key_of_file_name(parts.pop())
                ns = tuple(prefix) + tuple(parts)
                if key is None or len(ns) == 0 or not all(_is_label(p) for p in parts):
                    continue
                listed.append((ns, key, self._item_path(ns, key)))
        except CapError as e:
            if e.code == "not_found":
                return []
            raise
        return listed

    def _read_item(self, path: str) -> Optional[Tuple[Dict[str, Any], bytes]]:
        try:
            data = self.cap.read(path)
        except CapError as e:
            if e.code == "not_found":
                return None
            raise
        return _parse_item(data, path), data

    def _put(self, s: Tuple[Any, ...]) -> None:
        path, value = s[3], s[4]
        attempt = 1
        while True:
            existing = self._read_item(path)
            now = datetime.now(timezone.utc)
            before = existing and _parse_date(existing[0]["updatedAt"])
            f = {
                "format": 1,
                "value": value,
                "createdAt": _iso(_parse_date(existing[0]["createdAt"])) if existing else _iso(now),  # type: ignore[arg-type]
                "updatedAt": _iso(before if before and before > now else now),
            }
            body = (json.dumps(f, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
            if _write_over(self.cap, path, body, None if existing is None else existing[1], attempt, self.attempts):
                return
            attempt += 1

    def _delete(self, s: Tuple[Any, ...]) -> None:
        ns, path = s[1], s[3]
        try:
            self.cap.delete(path)
        except CapError as e:
            if e.code == "not_found":
                return
            raise
        # An emptied namespace is not one: its folders go while empty.
        for depth in range(len(ns), len(self.root), -1):
            try:
                # Removes an empty folder only (conflict otherwise): a namespace another item still holds stays.
                self.cap.remove_folder(self._folder_path(ns[:depth]))
            except CapError as e:
                if e.code in ("conflict", "not_found"):
                    return
                raise

    def _folder_path(self, labels: Sequence[str]) -> str:
        return _join(self.folder, *labels[len(self.root) :])

    def _within(self, ns: Sequence[str]) -> None:
        if not _starts_with(ns, self.root):
            raise CapStoreError(
                "outside_namespace", f"{list(ns)!r} is not within this store's namespace {list(self.root)!r}"
            )

    def _deeper(self, prefix: Tuple[str, ...]) -> Tuple[str, ...]:
        return prefix if _starts_with(prefix, self.root) else self.root

    def _item_path(self, ns: Sequence[str], key: str) -> str:
        return _join(self._folder_path(ns), encode_key(key) + _SUFFIX)
