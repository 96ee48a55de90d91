"""Context events (those that join no incident: most of a log) stored compactly: each batch's are
one zstandard-compressed block, found by the services, hosts and hours it holds (issue 22.2).

A row per event (its columns, its JSON body and four indexes) took about eight times the log's
size; a block takes the events' JSON bodies compressed together, one `context_keys` row per
(service, host, hour) it holds, and each event's id in `context_ids` (identity by position: a
re-read of the line finds its id there and adds nothing). Events that join an incident keep
their rows in `events`, and so do context events stored before this table existed: a log window
reads both.

A block written since 0.x (format 2) is framed, so a window decompresses only what it reads:
`FRAMED` (4 bytes that begin no zstandard frame), then little-endian uint32s: the events, the
events per frame, the frames, the keys frame's length and each body frame's length; then the keys
frame, a zstandard frame of a JSON array of each event's [time (UTC), service, host, id]; then the
body frames, each a zstandard frame of `FRAME` events' other values (event k in frame k // FRAME),
one JSON object a line (JSON text holds no raw newline): message, level, exception, source,
position and the body of store/event_bodies.py. A window decodes the keys (its block's times,
services, hosts and ids: what it bisects, filters and merges with rows by), and a body frame only
when it builds an event of it (an event the store built before is not built again).

A block written before (format 1) is one zstandard frame of the same keys without the id, a
newline, then each event's values with its id first, one a line; it is read as it was.
"""
from __future__ import annotations

import json
import struct
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from datetime import datetime, timedelta
from operator import itemgetter
from typing import Any, Callable, Iterable, Iterator, Sequence

import zstandard

from pipeline.clock import iso
from pipeline.prevalidated import copied, hold_shared
from pipeline.state import LogEvent
from pipeline.store import event_bodies
from pipeline.store.sql import POSTGRES, Connection, Params, insert_rows
from pipeline.store.stored_text import stored_text

LEVEL = 3  # zstandard's default: about 10x on log bodies at a fraction of the batch's time
FRAMED = b"IQB2"  # a format-2 block's first bytes (a format-1 block is a zstandard frame: 28 b5 2f fd)
FRAME = 128  # events per body frame: on the 100k bench, frames of 128 took 1.02x one frame's bytes
_HOUR = 13  # an ISO time's first 13 characters: its hour, so a key spans at most one
_encode = json.JSONEncoder(ensure_ascii=False).encode
KEY_COLUMNS = (("block_id", "bigint"), ("service", "text"), ("host", "text"), ("first_time", "text"), ("last_time", "text"))
ID_COLUMNS = (("event_id", "text"), ("block_id", "bigint"))
_ONE_STATEMENT = (  # PostgreSQL: a block, its keys and its ids
    "WITH block AS (INSERT INTO context_blocks(events, body, stored_at) VALUES ($1, $2, $3) RETURNING id),"
    " keys AS (INSERT INTO context_keys(block_id, service, host, first_time, last_time) SELECT block.id, k.* FROM"
    " block, unnest($4::text[], $5::text[], $6::text[], $7::text[]) AS k) INSERT INTO context_ids(event_id, block_id)"
    " SELECT i.event_id, block.id FROM block, unnest($8::text[]) AS i(event_id)")


def insert(conn: Connection, events: Sequence[LogEvent], *, stamp: str) -> None:
    """Store these context events as one block (with its keys and the events' ids)."""
    if not events:
        return
    # the keys a window filters by, as the events' rows and context_keys hold them (no NUL); a
    # batch's lines share their seconds: each time written once (equal times, whatever their offset,
    # are one instant and one UTC text)
    times: dict[datetime, str] = {}
    keys = []
    for e in events:
        time = times.get(e.time)
        if time is None:
            time = times[e.time] = iso(e.time)
        keys.append((time, stored_text(e.service), e.host if e.host is None else stored_text(e.host)))
    body = encode(keys, events)
    spans: dict[tuple[str, str | None, str], list[str]] = {}  # (service, host, hour): first and last time
    for time, service, host in keys:
        span = spans.get((service, host, time[:_HOUR]))
        if span is None:
            spans[(service, host, time[:_HOUR])] = [time, time]
        elif time < span[0]:
            span[0] = time
        elif time > span[1]:
            span[1] = time
    if conn.dialect == POSTGRES:  # the block, its keys and ids in one statement, its id never read back
        conn.execute(_ONE_STATEMENT, (len(events), body, stamp, *map(list, zip(*(k[:2] for k in spans))),
                                      *map(list, zip(*spans.values())), [stored_text(e.event_id) for e in events]))
        return
    block = conn.execute("INSERT INTO context_blocks(events, body, stored_at) VALUES ($1, $2, $3) RETURNING id",
                         (len(events), body, stamp)).fetchone()["id"]  # type: ignore[index]  # RETURNING: a row
    insert_rows(conn, "context_keys", KEY_COLUMNS,
                [(block, service, host, first, last) for (service, host, _), (first, last) in spans.items()])
    insert_rows(conn, "context_ids", ID_COLUMNS, [(e.event_id, block) for e in events])


def encode(keys: Sequence[tuple[str, str, str | None]], events: Sequence[LogEvent]) -> bytes:
    """A format-2 block of these events (their keys: [time, service, host]), as the docstring says."""
    return _framed([[*k, e.event_id] for k, e in zip(keys, events)], [_dumps(_entry(e, with_id=False)) for e in events])


def _framed(keys: list[list[Any]], entries: list[str]) -> bytes:
    compress = zstandard.ZstdCompressor(level=LEVEL).compress
    parts = [compress(_dumps(keys).encode("utf-8"))]
    parts += [compress("\n".join(entries[at:at + FRAME]).encode("utf-8")) for at in range(0, len(entries), FRAME)]
    head = struct.pack(f"<4s{4 + len(parts) - 1}I", FRAMED, len(keys), FRAME, len(parts) - 1, *map(len, parts))
    return b"".join([head, *parts])


# json.dumps(value, ensure_ascii=False, separators=(",", ":")), its encoder made once (json.dumps
# makes one a call when given options: a tenth of encoding a block)
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class Block:
    """A decoded block: each event's [time, service, host] (format 2: and id) and its positions
    ordered by time (ties by position), so a window finds its range by bisection; the rest of each
    event as JSON text, all of it (format 1) or a frame's once an event of it is built (format 2).
    `size` is about the bytes it holds (the block cache's measure, frames decoded so far too): by
    tracemalloc on the 100k bench, 1.7x format 1's text, 3x format 2's keys text and its
    compressed frames, 1.5x a frame's text once decoded."""

    __slots__ = ("keys", "times", "order", "key", "size", "_bodies", "_ids", "_blob", "_frames", "_per", "_decoded")

    def __init__(self, keys: list[list[Any]], bodies: list[str] | None = None, *, size: int = 0,
                 blob: bytes = b"", frames: Sequence[tuple[int, int]] = (), per: int = FRAME):
        self.keys, self.size = keys, size
        self.key: tuple[int, str] | None = None  # (id, stored time), once cached
        self.order = sorted(range(len(keys)), key=lambda i: keys[i][0])  # stable: a time's events by position
        self.times = [keys[i][0] for i in self.order]
        self._bodies = bodies  # format 1: every event's entry, its id first
        self._ids: list[str | None] = [None] * len(keys) if bodies is not None else []  # read when merged with rows
        self._blob, self._frames, self._per = blob, list(frames), per  # format 2: each body frame's (offset, length)
        self._decoded: list[list[str] | None] = [None] * len(self._frames)

    def id_at(self, index: int) -> str:
        if self._bodies is None:
            return str(self.keys[index][3])
        found = self._ids[index]
        if found is None:
            found = self._ids[index] = _id_of(self._bodies[index])
        return found

    def event(self, index: int) -> LogEvent:
        """The event at this position, parsed and validated from its keys and entry."""
        time, service, host = self.keys[index][:3]
        if self._bodies is not None:
            return _event(time, service, host, self._bodies[index])
        frame, at_ = divmod(index, self._per)
        entries = self._decoded[frame]
        if entries is None:
            at, length = self._frames[frame]
            text = zstandard.ZstdDecompressor().decompress(self._blob[at:at + length]).decode("utf-8")
            entries = self._decoded[frame] = text.split("\n")
            self.size += len(text) * 3 // 2
        return _event(time, service, host, f'{{"event_id":{_encode(self.keys[index][3])},{entries[at_][1:]}')


# an event of a block that falls in a window, not built yet (a window keeps few of those it finds):
# its time (UTC, as stored: the text sorts like the time), its block and its position there
Candidate = tuple[str, Block, int]


def event_at(block: Block, index: int, events: EventCache | None = None) -> LogEvent:
    """The event at this position of a block (built once while `events` holds it)."""
    def build() -> LogEvent:
        return block.event(index)

    return build() if events is None or block.key is None else events.event((*block.key, index), build)


class EventCache:
    """The events a store built last for log windows, by what each was built from (a block's id,
    stored time and position; a row's every column): a block never changes and a row's values are
    the key, so a hit is the event that parsing and validating would give again, for a fraction of
    the CPU. Windows of incidents close in time share most of their events. Each caller gets its
    own copy (`fields` too: the one mutable value of an event). 16,384 events: about 29 MB when full
    (1.75 KB an event on the 100k bench, by tracemalloc)."""

    def __init__(self, size: int = 16384):
        self.size = size
        # each event with whether its fields hold no object or array (a copy of the dict will do)
        self._events: OrderedDict[tuple[Any, ...], tuple[LogEvent, bool]] = OrderedDict()
        self._alike: dict[Any, Any] = {}  # see _shared

    def event(self, key: tuple[Any, ...], build: Callable[[], LogEvent]) -> LogEvent:
        found = self._events.get(key)
        if found is None:
            event = self._shared(build())
            found = self._events[key] = (event, not any(type(v) in _NESTED for v in event.fields.values()))
            if len(self._events) > self.size:
                self._events.popitem(last=False)
        else:
            self._events.move_to_end(key)
        return _copy(*found)

    def _shared(self, event: LogEvent) -> LogEvent:
        """The event as kept (never handed out: callers get copies), what many events hold alike
        held once: which fields were set, the private values, the service, host and level (a set
        and two dicts took 1 KB of the 2.7 KB an event held)."""
        values, private = event.__dict__, event.__pydantic_private__
        if private is not None and not any(private.values()):  # (the defaults: None)
            private = self._once(tuple(private), lambda: private)
        hold_shared(event, fields_set=self._once(frozenset(event.__pydantic_fields_set__)), private=private)
        for name in ("service", "host", "level"):
            if type(values[name]) is str:
                values[name] = self._once(values[name])
        return event

    def _once(self, value: Any, held: Callable[[], Any] | None = None) -> Any:
        found = self._alike.get(value)
        if found is None:
            if len(self._alike) > 4096:  # (values seen once in a while: a bound, not an eviction order)
                self._alike.clear()
            found = self._alike[value] = held() if held else value
        return found


class BlockCache:
    """The blocks a store decoded last, up to about `size` bytes (each block's own estimate, its
    frames decoded since counted at the next block put). A block never changes once written: it is
    keyed by its id and when it was stored, so an id SQLite hands out again after retention is not
    mistaken. 24 MB: about 120 format-1 blocks of 500 events, 140-odd of format 2 with their frames
    decoded, 200-odd of their keys alone."""

    def __init__(self, size: int = 24 << 20):
        self.size = size
        self._blocks: OrderedDict[tuple[int, str], Block] = OrderedDict()

    def get(self, key: tuple[int, str]) -> Block | None:
        found = self._blocks.get(key)
        if found is not None:
            self._blocks.move_to_end(key)
        return found

    def put(self, key: tuple[int, str], block: Block) -> None:
        self._blocks[key] = block
        held = sum(b.size for b in self._blocks.values())
        while held > self.size and len(self._blocks) > 1:
            held -= self._blocks.popitem(last=False)[1].size


def window(conn: Connection, *, service: str, hosts: Sequence[str], start: datetime, end: datetime,
           cache: BlockCache | None = None, limit: int | None = None) -> list[Candidate]:
    """The context events of the service, or on one of the hosts, between start and end: oldest
    first (a time's events in block then position order), the first `limit` of them, unbuilt."""
    low, high = iso(start), iso(end)
    # a key spans one hour at most: one that starts before the window's hour cannot reach into it
    floor = iso(start - timedelta(hours=1))[:_HOUR]
    p = Params([floor, high, low])  # $1..$3, in both halves
    # with each block's stored time, which the cache checks, in the same lookup
    keys = ("SELECT k.block_id, b.stored_at FROM context_keys k JOIN context_blocks b ON b.id = k.block_id WHERE {}"
            " AND k.first_time >= $1 AND k.first_time <= $2 AND k.last_time >= $3")
    sql = keys.format(f"k.service = {p(service)}")
    if hosts:
        sql += " UNION " + keys.format(f"k.host IN ({p.each(hosts)})")
    stamps = {r["block_id"]: r["stored_at"] for r in conn.execute(sql, p).fetchall()}
    if not stamps:
        return []
    wanted = set(hosts)
    out: list[Candidate] = []
    for block in _cached(conn, stamps, cache):
        keys_, order, times = block.keys, block.order, block.times
        for j in range(bisect_left(times, low), bisect_right(times, high)):
            i = order[j]
            key = keys_[i]
            if key[1] == service or key[2] in wanted:
                out.append((times[j], block, i))
    out.sort(key=itemgetter(0))  # stable: blocks came in id order, each block's events by (time, position)
    return out if limit is None else out[:limit]


def all_events(conn: Connection) -> Iterator[LogEvent]:
    """Every context event stored in blocks, block by block (for exports and checks)."""
    ids = [r["id"] for r in conn.execute("SELECT id FROM context_blocks ORDER BY id").fetchall()]
    for _, block in _blocks(conn, ids):
        for index in range(len(block.keys)):
            yield block.event(index)


def count(conn: Connection) -> int:
    row = conn.execute("SELECT count(*) AS n FROM context_ids").fetchone()
    return int(row["n"]) if row else 0


def drop_before(conn: Connection, stamp: str) -> int:
    """Delete the blocks stored before `stamp` (their keys and ids too); returns how many events went."""
    old = "SELECT id FROM context_blocks WHERE stored_at < $1"
    row = conn.execute("SELECT coalesce(sum(events), 0) AS n FROM context_blocks WHERE stored_at < $1", (stamp,)).fetchone()
    conn.execute(f"DELETE FROM context_ids WHERE block_id IN ({old})", (stamp,))
    conn.execute(f"DELETE FROM context_keys WHERE block_id IN ({old})", (stamp,))
    conn.execute("DELETE FROM context_blocks WHERE stored_at < $1", (stamp,))
    return int(row["n"]) if row else 0


def _entry(event: LogEvent, *, with_id: bool = True) -> dict[str, Any]:
    entry: dict[str, Any] = {"event_id": event.event_id} if with_id else {}  # format 2: the id is a key's
    entry["message"] = event.message
    if event.level is not None:
        entry["level"] = event.level
    if event.exception is not None:
        entry["exception"] = event.exception
    entry["source"], entry["position"] = event.source, event.position
    entry.update(event_bodies.extras_of(event))
    return entry


def _event(time: str, service: str, host: str | None, entry: str) -> LogEvent:
    # the keys' values, then the entry's (a time written with its own offset wins, as a later
    # duplicate key does in JSON): parsed and validated in one pass, not json.loads then a dict
    return LogEvent.model_validate_json(f'{{"time":{_encode(time)},"service":{_text(service)},"host":{_text(host)},{entry[1:]}')


def _id_of(entry: str) -> str:
    # an entry begins with its id (_entry); written by json.dumps, it is verbatim unless escaped
    if entry.startswith('{"event_id":"'):
        close = entry.find('"', 13)
        if close > 0 and "\\" not in entry[13:close]:
            return entry[13:close]
    return str(json.loads(entry)["event_id"])


def _copy(event: LogEvent, flat: bool) -> LogEvent:
    """An event's copy as `model_copy` makes it (its values, which fields were set, its private
    values) with a new `fields`: the only mutable value of an event, its strings and time are not.
    Cheaper than `model_copy`, whose generic copy.copy calls cost as much as the validation saved."""
    values = dict(event.__dict__)
    values["fields"] = dict(values["fields"]) if flat else _tree(values["fields"])  # empty too: the caller's own
    return copied(event, values)


def _tree(value: Any) -> Any:
    """A JSON value's copy, its objects and arrays new."""
    if type(value) is dict:
        return {k: _tree(v) if type(v) in _NESTED else v for k, v in value.items()}
    if type(value) is list:
        return [_tree(v) if type(v) in _NESTED else v for v in value]
    return value


_NESTED = (dict, list)


def _text(value: str | None) -> str:
    return "null" if value is None else _encode(value)


def _cached(conn: Connection, stamps: dict[int, str], cache: BlockCache | None) -> list[Block]:
    """The blocks of these ids (with their stored times), in id order, decoded once while cached."""
    ids = sorted(stamps)
    if cache is None:
        return [block for _, block in _blocks(conn, ids)]
    found = {i: cache.get((i, stamps[i])) for i in ids}
    missing = [i for i in ids if found[i] is None]
    for i, block in _blocks(conn, missing):
        block.key = (i, stamps[i])
        cache.put(block.key, block)
        found[i] = block
    return [b for i in ids if (b := found[i]) is not None]


def _blocks(conn: Connection, ids: Iterable[int], *, chunk: int = 50) -> Iterator[tuple[int, Block]]:
    """Each block's id and its decompressed events, in the order of `ids` (sorted)."""
    ids = list(ids)
    decompress = zstandard.ZstdDecompressor().decompress
    for start in range(0, len(ids), chunk):
        p = Params()
        rows = conn.execute(f"SELECT id, body FROM context_blocks WHERE id IN ({p.each(ids[start:start + chunk])})"
                            " ORDER BY id", p).fetchall()
        for r in rows:
            yield r["id"], decode(bytes(r["body"]), decompress)


def decode(body: bytes, decompress: Callable[[bytes], bytes] | None = None) -> Block:
    """A stored block, of either format: its keys decoded, format 2's body frames not yet."""
    decompress = decompress or zstandard.ZstdDecompressor().decompress
    if not body.startswith(FRAMED):
        text = decompress(body).decode("utf-8")
        head, _, rest = text.partition("\n")
        return Block(_interned(json.loads(head)), rest.split("\n"), size=len(text) * 17 // 10)
    _, per, frames = struct.unpack_from("<3I", body, len(FRAMED))
    lengths = struct.unpack_from(f"<{frames + 1}I", body, 16)
    at = 16 + 4 * len(lengths)
    keys = decompress(body[at:at + lengths[0]]).decode("utf-8")
    spans, at = [], at + lengths[0]
    for length in lengths[1:]:
        spans.append((at, length))
        at += length
    return Block(_interned(json.loads(keys)), size=3 * len(keys) + len(body), blob=body, frames=spans, per=per)


def _interned(keys: list[list[Any]]) -> list[list[Any]]:
    """The keys with one string per service and host (json.loads makes one per occurrence)."""
    seen: dict[Any, Any] = {}
    for key in keys:
        key[1] = seen.setdefault(key[1], key[1])
        key[2] = seen.setdefault(key[2], key[2])
    return keys

