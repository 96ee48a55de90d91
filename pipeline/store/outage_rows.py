"""The rows outage correlation reads and writes (pipeline/incidents/outage.py), inside the
transaction that stores a batch: the open incidents that named what an error names (members of
kind 'name' or 'service', found by member: migration 17's index), the patterns that joined
another pattern's incident, and each incident's leader (a JSON column of `incidents`).
"""
from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Callable, Sequence

from pipeline.state import LogEvent
from pipeline.store import context_blocks, event_bodies
from pipeline.store.records import Records
from pipeline.store.sql import Connection, Cursor, Params

NAME = "name"
CHUNK = 500


def open_incidents_holding(conn: Connection, members: Sequence[str], statuses: Sequence[str], *,
                           window: tuple[str, str] | None = None, unbounded: Sequence[str] = (),
                           only: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    """The incidents of `statuses` holding any of `members` as a name or a service: id -> the
    incident's opening fingerprint, first and last seen. With `window` (two stored times, which sort
    as text sorts), only those last seen at or after its start and first seen at or before its end
    (migration 22's index on last_seen), and the `unbounded` ones whatever their times; with `only`,
    only those incidents."""
    found: dict[str, dict[str, Any]] = {}
    columns = ("i.incident_id AS incident_id, i.fingerprint AS fingerprint, i.first_seen AS first_seen,"
               " i.last_seen AS last_seen")
    for start in range(0, len(members), CHUNK):
        p = Params()
        if window is not None and only is None:
            # the incidents of the window first (off the index on last_seen: those active around the
            # batch, however many the store holds), each then checked for a member (its primary key);
            # `status || ''` keeps SQLite's planner (no statistics) from scanning every open incident
            # off a status index instead
            held = f" OR i.incident_id IN ({p.each(unbounded)})" if unbounded else ""
            sql = (f"SELECT {columns} FROM incidents AS i"
                   f" WHERE (i.last_seen >= {p(window[0])} AND i.first_seen <= {p(window[1])}{held})"
                   f" AND i.status || '' IN ({p.each(statuses)}) AND EXISTS (SELECT 1 FROM incident_members AS m"
                   " WHERE m.incident_id = i.incident_id AND m.kind IN ('name', 'service')"
                   f" AND m.member IN ({p.each(members[start:start + CHUNK])}))")
        else:
            only_these = f" AND i.incident_id IN ({p.each(only)})" if only is not None else ""
            sql = (f"SELECT DISTINCT {columns}"
                   " FROM incident_members AS m JOIN incidents AS i ON i.incident_id = m.incident_id"
                   f" WHERE m.member IN ({p.each(members[start:start + CHUNK])}) AND m.kind IN ('name', 'service')"
                   f" AND i.status IN ({p.each(statuses)}){only_these}")
        rows = conn.execute(sql, p).fetchall()
        for row in rows:
            found[row["incident_id"]] = dict(row)
    return found


def send_open(conn: Connection, incident_ids: Sequence[str], statuses: Sequence[str]) -> list[Cursor]:
    """Which of these incidents are of `statuses` (open), sent; `read_open` reads them: the incidents a source's
    memory holds (incidents/carried.py), each maybe decided or merged by a reviewer since (its primary key)."""
    sent = []
    for start in range(0, len(incident_ids), CHUNK):
        p = Params()
        sent.append(conn.execute(f"SELECT incident_id FROM incidents WHERE incident_id IN"
                                 f" ({p.each(incident_ids[start:start + CHUNK])}) AND status IN ({p.each(statuses)})", p))
    return sent


def read_open(sent: list[Cursor]) -> set[str]:
    return {row["incident_id"] for cursor in sent for row in cursor.fetchall()}


def recent_errors(conn: Connection, window: tuple[str, str], statuses: Sequence[str], *, sources: Sequence[str],
                  incidents: int, events: int) -> tuple[dict[str, dict[str, Any]], list[tuple[LogEvent, str]]]:
    """The open incidents (of `statuses`) whose errors were written within `window` (two stored times), the
    `incidents` last seen latest, and their errors read from `sources` stored with a time in the window, the latest
    `events` (oldest first, each with its incident): what a source's earlier batches decided, read back when no
    memory of them is held (a restart: incidents/carried.py). The errors are read off the index on (service, time),
    so a long incident's older events are never scanned."""
    p = Params()
    near = {row["incident_id"]: dict(row) for row in conn.execute(
        "SELECT incident_id, fingerprint, first_seen, last_seen FROM incidents"
        f" WHERE last_seen >= {p(window[0])} AND first_seen <= {p(window[1])} AND status || '' IN ({p.each(statuses)})"
        f" ORDER BY last_seen DESC, incident_id LIMIT {p(incidents)}", p).fetchall()}
    if not near or not sources:
        return near, []
    p = Params()
    services = [r["member"] for r in conn.execute(
        "SELECT DISTINCT member FROM incident_members WHERE kind = 'service'"
        f" AND incident_id IN ({p.each(list(near))})", p).fetchall()]
    if not services:
        return near, []
    p = Params()
    # (`incident_id || ''`: the (service, time) index, not the incident's, is the one read)
    rows = conn.execute(
        f"SELECT {event_bodies.EVENT_COLUMNS}, incident_id FROM events WHERE service IN ({p.each(services)})"
        f" AND time >= {p(window[0])} AND time <= {p(window[1])} AND incident_id || '' IN ({p.each(list(near))})"
        f" AND source IN ({p.each(sources)}) ORDER BY time DESC, event_id LIMIT {p(events)}", p).fetchall()
    return near, [(event_bodies.event_of(row), row["incident_id"]) for row in reversed(rows)]


def recent_context(conn: Connection, *, services: Sequence[str], hosts: Sequence[str], start: datetime,
                   end: datetime, limit: int, scan: int, keep: Callable[[LogEvent], bool]) -> list[LogEvent]:
    """The context events (lines that opened nothing, stored in blocks) of these services or hosts written from
    `start` to `end` that `keep` takes, of the latest `scan`, the latest `limit`, oldest first."""
    found: dict[str, tuple[str, Any, int]] = {}  # by event id: a line of a service on one of the hosts is read once
    for service in services:
        for at, block, index in context_blocks.window(conn, service=service, hosts=hosts, start=start, end=end):
            found.setdefault(block.id_at(index), (at, block, index))
    # only the latest `scan` are built (a dense log's window holds thousands of lines), the latest `limit` kept
    latest = sorted(found.values(), key=lambda held: held[0])[-scan:] if scan else []
    kept = [event for event in (block.event(index) for _, block, index in latest) if keep(event)]
    return kept[-limit:] if limit else []


def names_of(conn: Connection, incident_ids: Sequence[str]) -> dict[str, tuple[set[str], set[str]]]:
    """Each incident's names and services."""
    found: dict[str, tuple[set[str], set[str]]] = {i: (set(), set()) for i in incident_ids}
    for start in range(0, len(incident_ids), CHUNK):
        p = Params()
        rows = conn.execute(
            "SELECT incident_id, kind, member FROM incident_members"
            f" WHERE incident_id IN ({p.each(incident_ids[start:start + CHUNK])}) AND kind IN ('name', 'service')",
            p).fetchall()
        for row in rows:
            names, services = found[row["incident_id"]]
            (names if row["kind"] == NAME else services).add(row["member"])
    return found


def newest_joined_by_pattern(conn: Connection, patterns: Sequence[str]) -> dict[str, dict[str, Any]]:
    """For each pattern that joined an incident another pattern opened, the newest such incident
    (id, status, closed_at, created_at, link, leader), as `incident_rows.newest_by_fingerprint` gives a pattern's own."""
    return read_joined(send_joined(conn, patterns))


def send_joined(conn: Connection, patterns: Sequence[str]) -> list[Cursor]:
    """`newest_joined_by_pattern`'s statements, sent; `read_joined` reads them (as incident_rows.send_newest)."""
    sent = []
    for start in range(0, len(patterns), CHUNK):
        p = Params()
        sent.append(conn.execute(
            "SELECT m.member AS fingerprint, i.incident_id AS incident_id, i.status AS status,"
            " i.closed_at AS closed_at, i.created_at AS created_at, i.linked_to AS linked_to, i.link_kind AS link_kind,"
            " i.leader AS leader FROM incident_members AS m JOIN incidents AS i ON i.incident_id = m.incident_id"
            f" WHERE m.member IN ({p.each(patterns[start:start + CHUNK])}) AND m.kind = 'pattern'"
            " AND i.fingerprint <> m.member", p))
    return sent


def read_joined(sent: list[Cursor]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for cursor in sent:
        for row in cursor.fetchall():
            known = found.get(row["fingerprint"])
            if known is None or row["created_at"] > known["created_at"]:
                found[row["fingerprint"]] = dict(row)
    return found


def leaders(conn: Connection, incident_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The stored leader of each of these incidents that has one."""
    found: dict[str, dict[str, Any]] = {}
    for start in range(0, len(incident_ids), CHUNK):
        p = Params()
        rows = conn.execute(
            f"SELECT incident_id, leader FROM incidents WHERE incident_id IN ({p.each(incident_ids[start:start + CHUNK])})"
            " AND leader IS NOT NULL", p).fetchall()
        for row in rows:
            found[row["incident_id"]] = json.loads(row["leader"])
    return found


def set_leaders(conn: Connection, chosen: dict[str, dict[str, Any]]) -> None:
    conn.executemany("UPDATE incidents SET leader = $2 WHERE incident_id = $1",
                     [(incident, json.dumps(leader, sort_keys=True)) for incident, leader in chosen.items()])


def incident_events(records: Records) -> list[dict[str, Any]]:
    """Every event an incident holds: its id, position and incident (the outage bed scores them)."""
    return [dict(r) for r in records.query("SELECT event_id, position, incident_id FROM events"
                                           " WHERE incident_id IS NOT NULL")]


def every_leader(records: Records) -> dict[str, dict[str, Any] | None]:
    """Each incident's leader (None: it has none)."""
    return {r["incident_id"]: json.loads(r["leader"]) if r["leader"] else None
            for r in records.query("SELECT incident_id, leader FROM incidents")}
