"""The rows a reviewer's split and merge move (review/grouping.py), the links between incidents
(schema 16: `linked_to`, `link_kind`, `link_status`), and the grouping funnel the Operations page
shows (lines → events → patterns → incidents).

Each writer works inside the transaction it is handed, so moving events, their members and counts
commit together or not at all.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable

from pipeline.clock import iso
from pipeline.store.records import Records
from pipeline.store.sql import Connection, Params

LINKED_FROM_LIMIT = 20
_FROM_WORDS = {"recurred": "recurred after it", "split": "was split out of it", "merged": "was merged into it"}


def linked_from(records: Records, incident_id: str) -> list[dict[str, Any]]:
    """The incidents that name this one as where they came from, oldest first (at most
    LINKED_FROM_LIMIT, off the incidents_linked index): {incident_id, kind, status, text}."""
    rows = records.query("SELECT incident_id, link_kind, status FROM incidents WHERE linked_to = $1"
                         " ORDER BY created_at, incident_id LIMIT $2", (incident_id, LINKED_FROM_LIMIT))
    return [{"incident_id": r["incident_id"], "kind": r["link_kind"], "status": r["status"],
             "text": f"{r['incident_id']} {_FROM_WORDS.get(r['link_kind'], 'is linked to it')}"} for r in rows]


def moved_elsewhere(records: Records, incident_id: str, event_ids: Iterable[str]) -> dict[str, str]:
    """Of `event_ids`, those that now belong to another incident (a split moved them out, or this
    incident was merged into another), each with the incident that holds it."""
    ids = list(dict.fromkeys(event_ids))
    if not ids:
        return {}
    p = Params()
    rows = records.query(f"SELECT event_id, incident_id FROM events WHERE event_id IN ({p.each(ids)})"
                         f" AND incident_id IS NOT NULL AND incident_id <> {p(incident_id)}", p)
    return {r["event_id"]: r["incident_id"] for r in rows}


def move_events(conn: Connection, event_ids: Iterable[str], *, to: str) -> None:
    """The events become `to`'s, news to its analysis (merged = 0) until its run takes them."""
    conn.executemany("UPDATE events SET incident_id = $1, merged = 0 WHERE event_id = $2",
                     [(to, event_id) for event_id in event_ids])


def move_pattern(conn: Connection, pattern: str, *, source: str, to: str, events: int) -> None:
    """The member pattern leaves `source` for `to`, with the number of its events that moved."""
    conn.execute("DELETE FROM incident_members WHERE incident_id = $1 AND kind = 'pattern' AND member = $2",
                 (source, pattern))
    conn.execute("INSERT INTO incident_members(incident_id, kind, member, n) VALUES ($1, 'pattern', $2, $3)"
                 " ON CONFLICT(incident_id, kind, member) DO UPDATE SET n = incident_members.n + excluded.n",
                 (to, pattern, events))


def add_patterns_of(conn: Connection, source: str, *, to: str) -> None:
    """`source`'s member patterns (with their counts) become `to`'s too; `source` keeps its rows as
    they were, the record of what it held when it was merged."""
    conn.execute("INSERT INTO incident_members(incident_id, kind, member, n)"
                 " SELECT $1, kind, member, n FROM incident_members WHERE incident_id = $2 AND kind = 'pattern'"
                 " ON CONFLICT(incident_id, kind, member) DO UPDATE SET n = incident_members.n + excluded.n",
                 (to, source))


def recount(conn: Connection, incident_id: str, *, stamp: str) -> None:
    """An incident's event count, first and last seen and services from its event rows (a paused
    incident keeps every event's row), and its pattern and service counts from its members."""
    conn.execute("DELETE FROM incident_members WHERE incident_id = $1 AND kind = 'service'", (incident_id,))
    conn.execute("INSERT INTO incident_members(incident_id, kind, member, n)"
                 " SELECT incident_id, 'service', service, count(*) FROM events WHERE incident_id = $1"
                 " GROUP BY incident_id, service", (incident_id,))
    conn.execute(
        "UPDATE incidents SET"
        " event_count = (SELECT count(*) FROM events WHERE incident_id = $1),"
        " first_seen = coalesce((SELECT min(time) FROM events WHERE incident_id = $1), first_seen),"
        " last_seen = coalesce((SELECT max(time) FROM events WHERE incident_id = $1), last_seen),"
        " pattern_count = (SELECT count(*) FROM incident_members WHERE incident_id = $1 AND kind = 'pattern'),"
        " service_count = (SELECT count(*) FROM incident_members WHERE incident_id = $1 AND kind = 'service'),"
        " updated_at = $2 WHERE incident_id = $1", (incident_id, stamp))


def moved_away(records: Records, incident_id: str, event_ids: list[str]) -> bool:
    """Whether any of these events (a paused analysis's evidence) is another incident's now."""
    if not event_ids:
        return False
    p = Params()
    rows = records.query(f"SELECT 1 FROM events WHERE event_id IN ({p.each(event_ids)})"
                         f" AND incident_id <> {p(incident_id)} LIMIT 1", p)
    return bool(rows)


def patterns_of(records: Records, incident_id: str) -> dict[str, int]:
    """An incident's member patterns with their event counts."""
    rows = records.query("SELECT member, n FROM incident_members WHERE incident_id = $1 AND kind = 'pattern'"
                         " ORDER BY n DESC, member", (incident_id,))
    return {r["member"]: int(r["n"]) for r in rows}


def funnel(records: Records, since: datetime) -> dict[str, int]:
    """What grouping made of what was read since `since` (by the store's clock): `lines` (records
    read: events stored and lines rejected; a multi-line record, a stack trace, is one), `events`
    (those that joined an incident), `patterns` (their distinct patterns) and `incidents` (opened).
    Each is one range of an index or of the daily pattern counts, not a scan of the events."""
    stamp, day = iso(since), iso(since)[:10]
    row = records.query(
        "SELECT (SELECT coalesce(sum(events), 0) FROM context_blocks WHERE stored_at >= $1) AS context,"
        " (SELECT count(*) FROM dead_letters WHERE created_at >= $1) AS rejected,"
        " (SELECT coalesce(sum(n), 0) FROM pattern_days WHERE day >= $2) AS events,"
        " (SELECT count(DISTINCT pattern) FROM pattern_days WHERE day >= $2) AS patterns,"
        " (SELECT count(*) FROM incidents WHERE created_at >= $1) AS incidents", (stamp, day))[0]
    events = int(row["events"])
    return {"lines": int(row["context"]) + int(row["rejected"]) + events, "events": events,
            "patterns": int(row["patterns"]), "incidents": int(row["incidents"])}
