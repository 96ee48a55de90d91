"""Context events (those that join no incident: most of a log) stored compactly: each batch's are
one zstandard-compressed block, found by the services, hosts and hours it holds (issue 22.2).

A row per event (its columns, its JSON body and four indexes) took about eight times the log's
size; a block takes the events' JSON bodies compressed together, one `context_keys` row per
(service, host, hour) it holds, and each event's id in `context_ids` (identity by position: a
re-read of the line finds its id there and adds nothing). Events that join an incident keep
their rows in `events`, and so do context events stored before this table existed: a log window
reads both.

A block's text is a JSON array of each event's [time (UTC), service, host], a newline, then each
event's other values as a JSON object, one a line (JSON text holds no raw newline): its id,
message, level, exception, source, position and the body of store/event_bodies.py. A window
decodes only the events it keeps.
"""
from __future__ import annotations

import json
from collections import OrderedDict
from datetime import datetime, timedelta
from typing import Any, Iterable, Iterator, Sequence

import zstandard

from pipeline.clock import iso
from pipeline.state import LogEvent
from pipeline.store import event_bodies
from pipeline.store.sql import Connection, Params

LEVEL = 3  # zstandard's default: about 10x on log bodies at a fraction of the batch's time
_HOUR = 13  # an ISO time's first 13 characters: its hour, so a key spans at most one


def insert(conn: Connection, events: Sequence[LogEvent], *, stamp: str) -> None:
    """Store these context events as one block (with its keys and the events' ids)."""
    if not events:
        return
    keys = [(iso(e.time), e.service, e.host) for e in events]
    text = "\n".join([json.dumps(keys, ensure_ascii=False, separators=(",", ":")),
                      *(json.dumps(_entry(e), ensure_ascii=False, separators=(",", ":")) for e in events)])
    body = zstandard.ZstdCompressor(level=LEVEL).compress(text.encode("utf-8"))
    row = conn.execute("INSERT INTO context_blocks(events, body, stored_at) VALUES ($1, $2, $3) RETURNING id",
                       (len(events), body, stamp)).fetchone()
    assert row is not None  # RETURNING gives the row inserted
    block = row["id"]
    spans: dict[tuple[str, str | None, str], list[str]] = {}
    for time, service, host in keys:
        span = spans.get((service, host, time[:_HOUR]))
        if span is None:
            spans[(service, host, time[:_HOUR])] = [time, time]
        elif time < span[0]:
            span[0] = time
        elif time > span[1]:
            span[1] = time
    conn.executemany("INSERT INTO context_keys(block_id, service, host, first_time, last_time)"
                     " VALUES ($1, $2, $3, $4, $5)",
                     [(block, service, host, first, last) for (service, host, _), (first, last) in spans.items()])
    conn.executemany("INSERT INTO context_ids(event_id, block_id) VALUES ($1, $2)", [(e.event_id, block) for e in events])


def stored_ids(conn: Connection, event_ids: list[str], *, chunk: int = 500) -> set[str]:
    """Which of these ids are of context events stored in blocks."""
    found: set[str] = set()
    for start in range(0, len(event_ids), chunk):
        p = Params()
        rows = conn.execute(f"SELECT event_id FROM context_ids WHERE event_id IN ({p.each(event_ids[start:start + chunk])})",
                            p).fetchall()
        found.update(r["event_id"] for r in rows)
    return found


class BlockCache:
    """The blocks a store decoded last (a block never changes once written: it is keyed by its id
    and when it was stored, so an id SQLite hands out again after retention is not mistaken)."""

    def __init__(self, size: int = 64):
        self.size = size
        self._blocks: OrderedDict[tuple[int, str], tuple[list[list[Any]], list[str]]] = OrderedDict()

    def get(self, key: tuple[int, str]) -> tuple[list[list[Any]], list[str]] | None:
        found = self._blocks.get(key)
        if found is not None:
            self._blocks.move_to_end(key)
        return found

    def put(self, key: tuple[int, str], block: tuple[list[list[Any]], list[str]]) -> None:
        self._blocks[key] = block
        while len(self._blocks) > self.size:
            self._blocks.popitem(last=False)


def window(conn: Connection, *, service: str, hosts: Sequence[str], start: datetime, end: datetime,
           cache: BlockCache | None = None) -> list[LogEvent]:
    """The context events of the service, or on one of the hosts, between start and end."""
    low, high = iso(start), iso(end)
    # a key spans one hour at most: one that starts before the window's hour cannot reach into it
    floor = iso(start - timedelta(hours=1))[:_HOUR]
    p = Params([floor, high, low])  # $1..$3, in both halves
    sql = (f"SELECT block_id FROM context_keys WHERE service = {p(service)}"
           " AND first_time >= $1 AND first_time <= $2 AND last_time >= $3")
    if hosts:
        sql += (" UNION SELECT block_id FROM context_keys"
                f" WHERE host IN ({p.each(hosts)}) AND first_time >= $1 AND first_time <= $2 AND last_time >= $3")
    blocks = sorted({r["block_id"] for r in conn.execute(sql, p).fetchall()})
    wanted = set(hosts)
    out: list[LogEvent] = []
    for keys, bodies in _cached(conn, blocks, cache):
        for (time, svc, host), body in zip(keys, bodies):
            if low <= time <= high and (svc == service or host in wanted):
                out.append(_event(time, svc, host, body))
    return out


def all_events(conn: Connection) -> Iterator[LogEvent]:
    """Every context event stored in blocks, block by block (for exports and checks)."""
    ids = [r["id"] for r in conn.execute("SELECT id FROM context_blocks ORDER BY id").fetchall()]
    for _, (keys, bodies) in _blocks(conn, ids):
        for (time, service, host), body in zip(keys, bodies):
            yield _event(time, service, host, body)


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


def _entry(event: LogEvent) -> dict[str, Any]:
    entry: dict[str, Any] = {"event_id": event.event_id, "message": event.message}
    if event.level is not None:
        entry["level"] = event.level
    if event.exception is not None:
        entry["exception"] = event.exception
    entry["source"], entry["position"] = event.source, event.position
    entry.update(event_bodies.extras_of(event))
    return entry


def _event(time: str, service: str, host: str | None, entry: str) -> LogEvent:
    values: dict[str, Any] = {"time": time, "service": service, "host": host}
    values.update(json.loads(entry))
    return LogEvent.model_validate(values)


def _cached(conn: Connection, ids: list[int], cache: BlockCache | None) -> list[tuple[list[list[Any]], list[str]]]:
    if cache is None or not ids:
        return [block for _, block in _blocks(conn, ids)]
    p = Params()
    stamps = {r["id"]: r["stored_at"] for r in conn.execute(
        f"SELECT id, stored_at FROM context_blocks WHERE id IN ({p.each(ids)})", p).fetchall()}
    found = {i: cache.get((i, stamps[i])) for i in stamps}
    missing = sorted(i for i, block in found.items() if block is None)
    for i, block in _blocks(conn, missing):
        cache.put((i, stamps[i]), block)
        found[i] = block
    return [b for i in sorted(found) if (b := found[i]) is not None]


def _blocks(conn: Connection, ids: Iterable[int], *,
            chunk: int = 50) -> Iterator[tuple[int, tuple[list[list[Any]], list[str]]]]:
    """Each block's id, keys and bodies, decompressed, in the order of `ids` (sorted)."""
    ids = list(ids)
    decompress = zstandard.ZstdDecompressor().decompress
    for start in range(0, len(ids), chunk):
        p = Params()
        rows = conn.execute(f"SELECT id, body FROM context_blocks WHERE id IN ({p.each(ids[start:start + chunk])})"
                            " ORDER BY id", p).fetchall()
        for r in rows:
            head, _, rest = decompress(bytes(r["body"])).decode("utf-8").partition("\n")
            yield r["id"], (json.loads(head), rest.split("\n"))
