"""An incident's members: the patterns (fingerprints) and services of the events it gathered, each
with its count, and the days each pattern was seen (pipeline/incidents/recurrence.py).

The incident step counts them in the transaction that stores a batch (one upsert per member and
batch), and keeps `pattern_count` and `service_count` on the incident's row, so the inbox's keyset
pages read them with the row; a page asks `days_seen` once for its rows (a primary-key range per
incident and pattern, at most WINDOW_DAYS rows each).
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable

from pipeline.store.records import Records
from pipeline.store.sql import POSTGRES, Connection, Params
from pipeline.store.stored_text import stored_text

PATTERN, SERVICE = "pattern", "service"


def count(conn: Connection, members: Counter[tuple[str, str, str]], *, day: str) -> None:
    """Add `members` ((incident_id, PATTERN or SERVICE, member) -> events) seen on `day`, and
    bring the touched incidents' pattern and service counts up to date."""
    if not members:
        return
    patterns: Counter[str] = Counter()
    for (_, kind, member), n in members.items():
        if kind == PATTERN:
            patterns[member] += n
    touched = list(dict.fromkeys(incident for incident, _, _ in members))
    if conn.dialect == POSTGRES:  # a statement per table, its rows as arrays (sql.insert_rows), not one a row
        stored: Counter[tuple[str, str, str]] = Counter()  # as stored (a NUL shown as ␀): each key once
        for (incident, kind, member), n in members.items():
            stored[(incident, kind, stored_text(member))] += n
        conn.execute(_MEMBERS_PG, [list(column) for column in zip(*((*key, n) for key, n in stored.items()))])
        conn.execute(_DAYS_PG, (list(patterns), day, list(patterns.values())))
        conn.execute(f"UPDATE incidents AS i SET pattern_count = {_PATTERNS_OF}, service_count = {_SERVICES_OF}"
                     f" WHERE i.incident_id = ANY($1::text[]) AND (i.pattern_count <> {_PATTERNS_OF}"
                     f" OR i.service_count <> {_SERVICES_OF})", (touched,))
        return
    conn.executemany(
        "INSERT INTO incident_members(incident_id, kind, member, n) VALUES ($1,$2,$3,$4)"
        " ON CONFLICT(incident_id, kind, member) DO UPDATE SET n = incident_members.n + excluded.n",
        [(incident, kind, member, n) for (incident, kind, member), n in members.items()])
    conn.executemany(
        "INSERT INTO pattern_days(pattern, day, n) VALUES ($1,$2,$3)"
        " ON CONFLICT(pattern, day) DO UPDATE SET n = pattern_days.n + excluded.n",
        [(pattern, day, n) for pattern, n in patterns.items()])
    # only where a count changed (a new pattern or service): a batch whose events repeat known ones
    # leaves the row alone, not a new version of a row under 17 indexes per incident and batch
    conn.executemany(
        f"UPDATE incidents SET pattern_count = {_PATTERNS}, service_count = {_SERVICES}"
        f" WHERE incident_id = $1 AND (pattern_count <> {_PATTERNS} OR service_count <> {_SERVICES})",
        [(incident,) for incident in touched])


_PATTERNS = "(SELECT count(*) FROM incident_members WHERE incident_id = $1 AND kind = 'pattern')"
_SERVICES = "(SELECT count(*) FROM incident_members WHERE incident_id = $1 AND kind = 'service')"
# PostgreSQL's: every key of a batch once (a Counter's), so no row is upserted twice in a statement
_MEMBERS_PG = ("INSERT INTO incident_members(incident_id, kind, member, n) SELECT * FROM"
               " unnest($1::text[], $2::text[], $3::text[], $4::int[]) ON CONFLICT(incident_id, kind, member)"
               " DO UPDATE SET n = incident_members.n + excluded.n")
_DAYS_PG = ("INSERT INTO pattern_days(pattern, day, n) SELECT p, $2::text, n FROM unnest($1::text[], $3::int[]) AS u(p, n)"
            " ON CONFLICT(pattern, day) DO UPDATE SET n = pattern_days.n + excluded.n")
_PATTERNS_OF = "(SELECT count(*) FROM incident_members AS m WHERE m.incident_id = i.incident_id AND m.kind = 'pattern')"
_SERVICES_OF = "(SELECT count(*) FROM incident_members AS m WHERE m.incident_id = i.incident_id AND m.kind = 'service')"


def days_seen(records: Records, incident_ids: Iterable[str], *, since: str) -> dict[str, int]:
    """For each incident, on how many distinct days from `since` (an ISO date) on any of its
    patterns was seen; incidents with none are absent."""
    ids = list(dict.fromkeys(incident_ids))
    if not ids:
        return {}
    p = Params()
    rows = records.query(
        "SELECT m.incident_id AS incident_id, count(DISTINCT d.day) AS days FROM incident_members AS m"
        " JOIN pattern_days AS d ON d.pattern = m.member"
        f" WHERE m.incident_id IN ({p.each(ids)}) AND m.kind = 'pattern' AND d.day >= {p(since)}"
        " GROUP BY m.incident_id", p)
    return {r["incident_id"]: int(r["days"]) for r in rows}
