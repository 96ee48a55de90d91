"""The rows outage correlation reads and writes (pipeline/incidents/outage.py), inside the
transaction that stores a batch: the open incidents that named what an error names (members of
kind 'name' or 'service', found by member: migration 17's index), the patterns that joined
another pattern's incident, and each incident's leader (a JSON column of `incidents`).
"""
from __future__ import annotations

import json
from typing import Any, Sequence

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
