"""Checkpoint values stored once per thread (the SQLite checkpoint store's layout).

SqliteSaver writes the whole state into every checkpoint: an incident's log window, similar docs
and RCA were copied into each of its steps and again into the pending writes. Here a value larger
than INLINE_MAX bytes is stored once in `checkpoint_values`, keyed by the thread and the digest of
its serialized bytes; checkpoint rows and writes carry the digest in its place. Values and
checkpoint rows are zstd-compressed with the shipped dictionary (stored_dictionary.py). The rows are content-addressed and never updated, so a checkpoint reads back exactly
the values it was written with (time travel stays honest); retention deletes only the values no
kept checkpoint or write of the thread references (`collect_garbage`). Rows written before this
layout (type `msgpack`, values inline) or before the dictionary read as they always did.
"""
from __future__ import annotations

import hashlib
import sqlite3
import threading
from contextlib import contextmanager

import ormsgpack
import zstandard
from collections import OrderedDict
from typing import Any, Callable, Iterable, Iterator, Mapping

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from pipeline.errors import CheckpointStoreError
from pipeline.store import state_encoding, stored_dictionary

VALUES_TYPE = "msgpack+values"  # a checkpoint row whose larger channel values are digests
REF_TYPE = "value-ref"  # a pending write whose value is a digest
INLINE_MAX = 256  # bytes: smaller values stay inline (a digest row would cost more than it saves)
# What this release writes is compressed with the shipped dictionary (stored_dictionary.py): its
# number is the type's suffix, `msgpack+values~1` for a checkpoint row and `msgpack~1` for a value.
# Rows written before it read as they were: checkpoint rows uncompressed, values plain zstd.
PACKED = f"~{stored_dictionary.DICTIONARY_ID}"
PACKED_VALUES_TYPE = VALUES_TYPE + PACKED
CHECKPOINT_TYPES = (VALUES_TYPE, PACKED_VALUES_TYPE)  # the rows whose values are digests
_plain = stored_dictionary.CodecPool(zstandard.ZstdDecompressor)  # for values written by 0.3


def compress(blob: bytes) -> bytes:
    """A value as this release stores it (its type gets the PACKED suffix)."""
    return stored_dictionary.compress(blob)


def decompress(blob: bytes, kind: str = "") -> bytes:
    """A stored value's serialized bytes: by the dictionary its type names, or plain zstd (0.3)."""
    if kind.endswith(PACKED):
        return stored_dictionary.decompress(blob)
    return _plain.run(blob, "decompress")


CACHE_ENTRIES = 4096

# a rowid table: its leaves hold rows of a few KB whole (a WITHOUT ROWID table overflows them
# into pages of their own, doubling the file)
SCHEMA = ("CREATE TABLE IF NOT EXISTS checkpoint_values (thread_id TEXT NOT NULL, hash BLOB NOT NULL,"
          " type TEXT NOT NULL, value BLOB NOT NULL, UNIQUE (thread_id, hash))")
INSERT = "INSERT OR IGNORE INTO checkpoint_values (thread_id, hash, type, value) VALUES (?, ?, ?, ?)"


def digest(kind: str, blob: bytes) -> bytes:
    return hashlib.blake2b(kind.encode() + b"\0" + blob, digest_size=16).digest()


def _ref(thread_id: str, value_hash: bytes) -> bytes:
    # a write's reference names its thread: the serializer resolves it without the row's columns
    return value_hash + thread_id.encode()


def _unref(ref: bytes) -> tuple[str, bytes]:
    return ref[16:].decode(), ref[:16]


class ValueCache:
    """Serialized values by the object they were serialized from, so a channel that did not change
    between two checkpoints, or a node's write that becomes the channel's value, is serialized
    once. The entry holds the object, so its id cannot be reused while it is cached."""

    def __init__(self, entries: int = CACHE_ENTRIES):
        self._entries = entries
        self._items: OrderedDict[int, tuple[Any, str, bytes, bytes]] = OrderedDict()
        # compressed bytes by digest: a value serialized again (a new object of the same content,
        # such as the same similar docs for another incident of the kind) is not compressed again;
        # zstd gives the same bytes for the same input, level and dictionary
        self._packed: OrderedDict[bytes, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def serialized(self, value: Any, dumps: Callable[[Any], tuple[str, bytes]]) -> tuple[str, bytes, bytes | None]:
        """(type, bytes, digest) of a value to store, compressed; (type, bytes, None) of one that stays inline."""
        key = id(value)
        with self._lock:
            hit = self._items.get(key)
            if hit is not None and hit[0] is value:
                self._items.move_to_end(key)
                return hit[1], hit[2], hit[3]
        kind, blob = dumps(value)
        if len(blob) <= INLINE_MAX:
            return kind, blob, None
        value_hash = digest(kind, blob)
        with self._lock:
            packed = self._packed.get(value_hash)
            if packed is not None:
                self._packed.move_to_end(value_hash)
        if packed is None:
            packed = compress(blob)
        kind = kind + PACKED  # what the values table stores
        with self._lock:
            self._items[key] = (value, kind, packed, value_hash)
            if len(self._items) > self._entries:
                self._items.popitem(last=False)
            self._packed[value_hash] = packed
            if len(self._packed) > self._entries:
                self._packed.popitem(last=False)
        return kind, packed, value_hash

    def remember(self, value: Any, kind: str, packed: bytes, value_hash: bytes) -> None:
        """Take a value just read back from its stored row as serialized already: written again
        unchanged (a checkpoint made from the one it was read from), it is not encoded again."""
        with self._lock:
            self._items[id(value)] = (value, kind, packed, value_hash)
            if len(self._items) > self._entries:
                self._items.popitem(last=False)


class OwnAllowlistSerde(JsonPlusSerializer):
    """A JsonPlusSerializer whose msgpack allowlist is the one it was built with, whatever
    LANGGRAPH_STRICT_MSGPACK said when langgraph was imported: with it set, `compile()` would widen
    the allowlist with the graph's schema types and LangChain's message classes (cloning the
    saver); here the allowlist stays ours, so import order and the environment do not matter."""

    def with_msgpack_allowlist(self, extra_allowlist: Iterable[tuple[str, ...] | type]) -> JsonPlusSerializer:
        return self

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        # the same bytes as LangGraph's, our state classes found first (state_encoding.py)
        if obj is None or isinstance(obj, (bytes, bytearray)):
            return super().dumps_typed(obj)
        try:
            return "msgpack", state_encoding.packed(obj)
        except ormsgpack.MsgpackEncodeError:
            return super().dumps_typed(obj)  # LangGraph's own error (or fallback) for what it cannot write


class ValuesSerde(OwnAllowlistSerde):
    """The strict serializer (its allowlist our own, never widened by LangGraph), reading checkpoints and writes stored as digests from the values table through `fetch` (on
    the saver's connection); it writes as the strict serializer does."""

    def __init__(self, *, fetch: Callable[[str, bytes], tuple[str, bytes]], cache: ValueCache | None = None,
                 **options: Any):
        super().__init__(**options)
        self.fetch = fetch
        self.cache = cache  # the store's serialized values: a value read within `read_once` is remembered there
        self._once = threading.local()

    @contextmanager
    def read_once(self) -> Iterator[None]:
        """Within it, this thread decodes each stored value once (by its thread and digest): one
        step of a run reads its checkpoint more than once (the runner's read, then LangGraph's
        `update_state` and `invoke` each read the newest checkpoint again), and the values they
        share are the same rows. The objects are shared by those reads, so it spans one step whose
        readers do not change what they read (LangGraph's channels and our reducers make new
        values); outside it every read decodes afresh."""
        outer = getattr(self._once, "memo", None)
        if outer is None:
            self._once.memo = {}
        try:
            yield
        finally:
            if outer is None:
                self._once.memo = None

    def plain_loads(self, data: tuple[str, bytes]) -> Any:
        return super().loads_typed(data)

    def stored_checkpoint(self, kind: str, blob: bytes) -> dict[str, Any]:
        """A row of CHECKPOINT_TYPES as stored: its inline values, and digests in `channel_refs`."""
        stored: dict[str, Any] = self.plain_loads(("msgpack", _inflate(blob, kind) if kind == PACKED_VALUES_TYPE else blob))
        return stored

    def stored_value(self, thread_id: str, value_hash: bytes) -> Any:
        memo: dict[tuple[str, bytes], Any] | None = getattr(self._once, "memo", None)
        if memo is not None and (thread_id, value_hash) in memo:
            return memo[(thread_id, value_hash)]
        kind, blob = self.fetch(thread_id, value_hash)
        value = self.plain_loads((kind.removesuffix(PACKED), _inflate(blob, kind)))
        if memo is not None:
            memo[(thread_id, value_hash)] = value
            if self.cache is not None and kind.endswith(PACKED):  # stored as this release writes it
                self.cache.remember(value, kind, blob, value_hash)
        return value

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        kind, blob = data
        if kind == REF_TYPE:
            return self.stored_value(*_unref(blob))
        if kind in CHECKPOINT_TYPES:
            stored = self.stored_checkpoint(kind, blob)
            thread_id = stored.pop("values_thread", "")
            values = dict(stored.get("channel_values") or {})
            for channel, value_hash in (stored.pop("channel_refs", None) or {}).items():
                values[channel] = self.stored_value(thread_id, value_hash)
            stored["channel_values"] = values
            return stored
        return self.plain_loads(data)


def encode_checkpoint(serde: ValuesSerde, cache: ValueCache, thread_id: str,
                      checkpoint: Mapping[str, Any]) -> tuple[str, bytes, list[tuple[Any, ...]]]:
    """(type, bytes) of a checkpoint row and the value rows it references."""
    inline, refs, rows = {}, {}, []
    for channel, value in (checkpoint.get("channel_values") or {}).items():
        if _small(value):
            inline[channel] = value
            continue
        kind, blob, value_hash = cache.serialized(value, serde.dumps_typed)
        if value_hash is None:
            inline[channel] = value
        else:
            refs[channel] = value_hash
            rows.append((thread_id, value_hash, kind, blob))
    stored = {**checkpoint, "channel_values": inline, "channel_refs": refs, "values_thread": thread_id}
    _, blob = serde.dumps_typed(stored)
    return PACKED_VALUES_TYPE, compress(blob), rows


def _small(value: Any) -> bool:
    # what needs no serializing to know it stays inline (most of a checkpoint's channels)
    return value is None or isinstance(value, (bool, int, float)) or (
        isinstance(value, (str, bytes)) and len(value) <= INLINE_MAX // 4)


def encode_write(serde: ValuesSerde, cache: ValueCache, thread_id: str, value: Any) -> tuple[str, bytes, tuple[Any, ...] | None]:
    """(type, bytes) of a pending write's value and the value row it references, if any."""
    if _small(value):
        return (*serde.dumps_typed(value), None)
    kind, blob, value_hash = cache.serialized(value, serde.dumps_typed)
    if value_hash is None:
        return kind, blob, None
    return REF_TYPE, _ref(thread_id, value_hash), (thread_id, value_hash, kind, blob)


def _inflate(blob: bytes, kind: str) -> bytes:
    try:
        return decompress(blob, kind)
    except zstandard.ZstdError as exc:
        raise CheckpointStoreError(f"the checkpoint store holds a damaged value: {exc}") from exc


def fetch_value(conn: sqlite3.Connection, thread_id: str, value_hash: bytes) -> tuple[str, bytes]:
    row = conn.execute("SELECT type, value FROM checkpoint_values WHERE thread_id = ? AND hash = ?",
                       (thread_id, value_hash)).fetchone()
    if row is None:
        raise CheckpointStoreError(f"the checkpoint store lacks a value of thread {thread_id}"
                                   f" ({value_hash.hex()}): the file was edited or damaged")
    return row[0], row[1]


def referenced(serde: ValuesSerde, conn: sqlite3.Connection, thread_id: str) -> set[bytes]:
    """The digests the thread's checkpoints and writes reference."""
    found: set[bytes] = set()
    for kind, blob in conn.execute("SELECT type, checkpoint FROM checkpoints WHERE thread_id = ? AND type IN (?, ?)",
                                   (thread_id, *CHECKPOINT_TYPES)):
        found.update((serde.stored_checkpoint(kind, blob).get("channel_refs") or {}).values())
    for (blob,) in conn.execute("SELECT value FROM writes WHERE thread_id = ? AND type = ?", (thread_id, REF_TYPE)):
        found.add(_unref(blob)[1])
    return found


def collect_garbage(serde: ValuesSerde, conn: sqlite3.Connection, thread_id: str) -> int:
    """Delete the thread's values that no checkpoint or write of it references (in the caller's
    transaction); returns how many went."""
    keep = referenced(serde, conn, thread_id)
    stored = [h for (h,) in conn.execute("SELECT hash FROM checkpoint_values WHERE thread_id = ?", (thread_id,))]
    gone = [(thread_id, h) for h in stored if h not in keep]
    conn.executemany("DELETE FROM checkpoint_values WHERE thread_id = ? AND hash = ?", gone)
    return len(gone)
