"""The rows the incident step writes (pipeline/incidents/batch.py): events, dead letters, new
incidents and their counts, the source's cursor and the template miner's saved state.

Each function works inside the transaction it is handed (`Records.transaction()`), so one batch
of events, the incidents they open and the cursor that covers them commit together. What the rows
mean (which event opens an incident, when a closed one reopens, its SLA) is decided above.
"""
from __future__ import annotations

import json
from typing import Any

from pipeline.clock import iso
from pipeline.errors import LeaseLost
from pipeline.state import LogEvent
from pipeline.store import context_blocks, event_bodies
from pipeline.store.sql import GREATEST, LEAST, Connection, Cursor, Params, insert_rows, placeholders

EVENT_COLUMNS = (("event_id", "text"), ("incident_id", "text"), ("time", "text"), ("service", "text"),
                 ("host", "text"), ("level", "text"), ("exception", "text"), ("message", "text"), ("body", "text"),
                 ("source", "text"), ("position", "text"), ("stored_at", "text"))


def has_event(conn: Connection, event_id: str) -> bool:
    return conn.execute("SELECT 1 FROM events WHERE event_id = $1", (event_id,)).fetchone() is not None


def stored_event_ids(conn: Connection, event_ids: list[str], *, chunk: int = 500) -> set[str]:
    """Which of these event ids are stored already, as rows or in context blocks: one statement per
    `chunk` ids for both tables, every chunk sent before any is read (in a pipelined transaction,
    one round trip for them all)."""
    sent = []
    for start in range(0, len(event_ids), chunk):
        some = event_ids[start:start + chunk]
        marks = placeholders(len(some))
        sent.append(conn.execute(f"SELECT event_id FROM context_ids WHERE event_id IN ({marks})"
                                 f" UNION ALL SELECT event_id FROM events WHERE event_id IN ({marks})", some))
    return {r["event_id"] for cursor in sent for r in cursor.fetchall()}


def has_content_ids(conn: Connection) -> bool:
    """Whether events may be stored under their content's id (schema 6 on: see store_meta)."""
    return conn.execute("SELECT 1 FROM store_meta WHERE key = 'content_ids'").fetchone() is not None


def insert_events(conn: Connection, events: list[tuple[LogEvent, str | None]], *, stamp: str) -> None:
    """Store events, each with the incident it joined, in one statement; those that joined none
    (context for log windows) as one compressed block (store/context_blocks.py)."""
    context_blocks.insert(conn, [event for event, incident_id in events if incident_id is None], stamp=stamp)
    events = [(event, incident_id) for event, incident_id in events if incident_id is not None]
    if not events:
        return
    insert_rows(conn, "events", EVENT_COLUMNS,
                [(event.event_id, incident_id, iso(event.time), event.service, event.host, event.level,
                  event.exception, event.message, event_bodies.body_of(event), event.source, event.position, stamp)
                 for event, incident_id in events])


def count_events(conn: Connection, incident_id: str, *, added: int, first: str, last: str, stamp: str) -> None:
    """`added` more events of the incident, from `first` to `last`: its count and first/last seen follow."""
    conn.execute(
        "UPDATE incidents SET event_count = event_count + $1,"
        f" first_seen = {LEAST[conn.dialect]}(first_seen, $2), last_seen = {GREATEST[conn.dialect]}(last_seen, $3),"
        " updated_at = $4 WHERE incident_id = $5",
        (added, first, last, stamp, incident_id),
    )


def newest_by_fingerprint(conn: Connection, fingerprints: list[str], *, chunk: int = 500) -> dict[str, dict[str, Any]]:
    """Each of these fingerprints' newest incident (id, status, closed_at, created_at), by
    fingerprint; those with none are absent (one query per `chunk` fingerprints)."""
    return read_newest(send_newest(conn, fingerprints, chunk=chunk))


def send_newest(conn: Connection, fingerprints: list[str], *, chunk: int = 500) -> list[Cursor]:
    """`newest_by_fingerprint`'s statements, sent (`read_newest` reads them): in a pipelined
    transaction, other reads sent before the first is read share its round trip."""
    sent = []
    for start in range(0, len(fingerprints), chunk):
        p = Params()
        sent.append(conn.execute(
            "SELECT fingerprint, incident_id, status, closed_at, created_at, linked_to, link_kind FROM incidents AS i"
            f" WHERE fingerprint IN ({p.each(fingerprints[start:start + chunk])}) AND created_at ="
            " (SELECT MAX(created_at) FROM incidents AS newer WHERE newer.fingerprint = i.fingerprint)",
            p))
    return sent


def read_newest(sent: list[Cursor]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for cursor in sent:
        for row in cursor.fetchall():
            found.setdefault(row["fingerprint"], dict(row))
    return found


def merge_target(conn: Connection, row: dict[str, Any], *, hops: int = 20) -> dict[str, Any]:
    """The incident a merged incident's events go to: the one it was merged into (followed while
    that was merged too, at most `hops` times), as `newest_by_fingerprint` gives rows; `row` when
    it was not merged."""
    for _ in range(hops):
        if row.get("link_kind") != "merged" or not row.get("linked_to"):
            return row
        found = conn.execute("SELECT incident_id, status, closed_at, created_at, linked_to, link_kind FROM incidents"
                             " WHERE incident_id = $1", (row["linked_to"],)).fetchone()
        if found is None:
            return row
        row = dict(found)
    return row


def link_incident(conn: Connection, incident_id: str, *, to: str, kind: str, status: str | None = None) -> None:
    """Name the incident `incident_id` came from (`kind`: recurred, split or merged; `status`: a
    recurrence's decided status)."""
    conn.execute("UPDATE incidents SET linked_to = $1, link_kind = $2, link_status = $3 WHERE incident_id = $4",
                 (to, kind, status, incident_id))


def incident_exists(conn: Connection, incident_id: str) -> bool:
    return conn.execute("SELECT 1 FROM incidents WHERE incident_id = $1", (incident_id,)).fetchone() is not None


def insert_incident(conn: Connection, *, incident_id: str, fingerprint: str, title: str, service: str, severity: str,
                    first_seen: str, stamp: str, sla_deadline: str, backfilled: bool = False) -> None:
    """A new incident, analysing (the runner starts its run), its first event's time its first and last seen."""
    conn.execute(
        "INSERT INTO incidents(incident_id, fingerprint, title, service, status, severity,"
        " first_seen, last_seen, created_at, updated_at, sla_deadline, backfilled)"
        " VALUES ($1,$2,$3,$4, 'analyzing', $5, $6,$7,$8,$9,$10,$11)",
        (incident_id, fingerprint, title, service, severity, first_seen, first_seen, stamp, stamp, sla_deadline,
         int(backfilled)),
    )


def retitle(conn: Connection, titles: list[tuple[str, str, str]]) -> None:
    """(incident id, stored title, new title): each title replaced only while it is still the stored one."""
    for incident_id, stored, new in titles:
        conn.execute("UPDATE incidents SET title = $1 WHERE incident_id = $2 AND title = $3", (new, incident_id, stored))


def save_cursor(conn: Connection, source: str, value: str, stamp: str,
                fence: tuple[str, str, int] | None = None) -> None:
    """Advance a source's cursor; with a `fence` (source, holder, generation: store/source_leases.py)
    only while that lease still names the holder at that generation, else LeaseLost (the caller's
    transaction, the batch the cursor covers, rolls back)."""
    if fence is None:
        conn.execute(
            "INSERT INTO cursors(source, value, updated_at) VALUES ($1,$2,$3)"
            " ON CONFLICT(source) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
            (source, value, stamp),
        )
        return
    row = conn.execute(
        "INSERT INTO cursors(source, value, updated_at) SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM source_leases"
        " WHERE source = $4 AND holder = $5 AND generation = $6)"
        " ON CONFLICT(source) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at RETURNING source",
        (source, value, stamp, *fence),
    ).fetchone()
    if row is None:
        raise LeaseLost(fence[0])


def check_fence(conn: Connection, fence: tuple[str, str, int]) -> None:
    """LeaseLost unless the source's lease still names the holder at its generation (a batch that
    moves no cursor is stored under its lease too)."""
    fence_held(send_fence(conn, fence), fence)


def send_fence(conn: Connection, fence: tuple[str, str, int]) -> Cursor:
    """`check_fence`'s read, sent; `fence_held` reads it. Under the writer lock (which every take
    of a lease holds: store/source_leases.py) its answer stands to the commit, so it may be read
    with the batch's other reads, and the cursor then saved without a fence."""
    return conn.execute("SELECT 1 FROM source_leases WHERE source = $1 AND holder = $2 AND generation = $3", fence)


def fence_held(sent: Cursor, fence: tuple[str, str, int]) -> None:
    if sent.fetchone() is None:
        raise LeaseLost(fence[0])


# A rejected line is stored once: a re-read of the same line at the same place is no news (compared
# as stored: a NUL shown as ␀), but a different line at an offset used before (the file was rewritten
# or rotated under the same name) is, kept as `position#2`, `#3`... (positions are unique), decided
# by the database, no read first; a range on (source, position), the unique index: '#' and the
# digits after it sort below '~'.
_DEAD_LETTER = (
    "INSERT INTO dead_letters(source, position, reason, raw, created_at)"
    " SELECT $1, CASE WHEN d.n = 0 THEN CAST($2 AS TEXT) ELSE CAST($2 AS TEXT) || '#' || (d.n + 1) END, $3, $4, $5"
    " FROM (SELECT count(*) AS n, count(CASE WHEN raw = CAST($4 AS TEXT) AND reason = CAST($3 AS TEXT) THEN 1 END)"
    " AS same FROM dead_letters WHERE source = $1 AND (position = $2 OR (position > $6 AND position < $7))) AS d"
    " WHERE d.same = 0 RETURNING 1")


def send_dead_letters(conn: Connection, letters: list[tuple[str, str, str, str]], *, stamp: str) -> list[Cursor]:
    """Store these rejected lines ((source, position, reason, raw) each), each a statement whose
    answer is not waited for: `count_stored` reads how many were new."""
    return [conn.execute(_DEAD_LETTER, (source, position, reason, raw, stamp, f"{position}#", f"{position}#~"))
            for source, position, reason, raw in letters]


def count_stored(sent: list[Cursor]) -> int:
    return sum(1 for cursor in sent if cursor.fetchone() is not None)


def template_revision(conn: Connection) -> int:
    """The revision of the miner's saved state (0: nothing saved yet)."""
    row = conn.execute("SELECT revision FROM template_state WHERE id = 1").fetchone()
    return row["revision"] if row else 0


def template_state(conn: Connection) -> str | None:
    """The miner's saved state, as JSON text (None: nothing saved yet)."""
    row = conn.execute("SELECT state FROM template_state WHERE id = 1").fetchone()
    return row["state"] if row else None


def template_changes(conn: Connection, header: dict[str, Any], since: int) -> dict[str, Any]:
    """The miner's rows saved after revision `since` (0: all of them), as the miner's changes
    (TemplateMiner.apply_changes); `header` is the saved state's (version, depth, clusters counter)."""
    clusters = conn.execute("SELECT cluster_id, tokens, size, template_id, path, parent FROM template_clusters"
                            " WHERE revision > $1 ORDER BY cluster_id", (since,)).fetchall()
    keys = conn.execute("SELECT key, root FROM template_keys WHERE revision > $1", (since,)).fetchall()
    return {**header, "kind": "changes", "since": None,
            "clusters": [[r["cluster_id"], json.loads(r["tokens"]), r["size"], r["template_id"], json.loads(r["path"]),
                          r["parent"]] for r in clusters],
            "keys": [[*json.loads(r["key"]), r["root"]] for r in keys]}


def save_template_changes(conn: Connection, revision: int, changes: dict[str, Any], stamp: str) -> None:
    """Upsert the clusters and keys in the miner's `changes` (TemplateMiner.changes_since) at
    `revision`, and the state's header: never the whole state."""
    conn.executemany(
        "INSERT INTO template_clusters(cluster_id, tokens, size, template_id, path, parent, revision)"
        " VALUES ($1,$2,$3,$4,$5,$6,$7) ON CONFLICT(cluster_id) DO UPDATE SET tokens = excluded.tokens,"
        " size = excluded.size, parent = excluded.parent, revision = excluded.revision",
        [(cid, json.dumps(tokens), size, tid, json.dumps(path), parent, revision)
         for cid, tokens, size, tid, path, parent in changes["clusters"]])
    conn.executemany(
        "INSERT INTO template_keys(key, root, revision) VALUES ($1,$2,$3)"
        " ON CONFLICT(key) DO UPDATE SET root = excluded.root, revision = excluded.revision",
        [(json.dumps([n, key]), root, revision) for n, key, root in changes["keys"]])
    header = {k: changes[k] for k in ("version", "depth", "clusters_counter")}
    save_template_state(conn, revision, json.dumps({**header, "kind": "rows"}), stamp)


def save_template_state(conn: Connection, revision: int, state: str, stamp: str) -> None:
    conn.execute(
        "INSERT INTO template_state(id, revision, state, updated_at) VALUES (1, $1, $2, $3)"
        " ON CONFLICT(id) DO UPDATE SET revision = excluded.revision, state = excluded.state,"
        " updated_at = excluded.updated_at",
        (revision, state, stamp))
