"""Related incidents' SQL: past incidents of one fingerprint (the Drain template of the opening
line), newest first, in keyset pages off `incidents_fingerprint (fingerprint, created_at)`: one
range of one index, however many incidents the store holds. And the keyset walk the evidence
index catches up with."""
from __future__ import annotations

from pipeline.store.records import Records
from pipeline.store.sql import Params

COLUMNS = "incident_id, created_at"


def same_fingerprint(records: Records, fingerprint: str, *, exclude: str, limit: int,
                     before: tuple[str, str] | None = None) -> list[str]:
    """Incident ids of the fingerprint, newest first, older than `before` (created_at, incident_id)."""
    p = Params()
    sql = f"SELECT incident_id, created_at FROM incidents WHERE fingerprint = {p(fingerprint)} AND incident_id <> {p(exclude)}"
    if before is not None:
        at = p(before[0])
        sql += f" AND (created_at < {at} OR (created_at = {at} AND incident_id < {p(before[1])}))"
    sql += f" ORDER BY created_at DESC, incident_id DESC LIMIT {p(int(limit))}"
    return [r["incident_id"] for r in records.query(sql, p)]


def same_service(records: Records, service: str, *, exclude: str, limit: int, other_than: str | None) -> list[str]:
    """Incident ids of one service but of another fingerprint than `other_than`, newest first (off
    `incidents_service`), `exclude` left out."""
    return _same(records, "service", service, exclude=exclude, limit=limit, other_than=other_than)


def same_category(records: Records, category: str, *, exclude: str, limit: int, other_than: str | None) -> list[str]:
    """Incident ids whose analysis names `category`, of another fingerprint than `other_than`, newest
    first (off `incidents_category`), `exclude` left out."""
    return _same(records, "category", category, exclude=exclude, limit=limit, other_than=other_than)


def _same(records: Records, column: str, value: str, *, exclude: str, limit: int, other_than: str | None) -> list[str]:
    """Incident ids whose `column` (one of ours, never a caller's text) is `value`: see the two above."""
    p = Params()
    sql = f"SELECT incident_id FROM incidents WHERE {column} = {p(value)} AND incident_id <> {p(exclude)}"
    if other_than:
        sql += f" AND fingerprint <> {p(other_than)}"
    sql += f" ORDER BY created_at DESC, incident_id DESC LIMIT {p(int(limit))}"
    return [r["incident_id"] for r in records.query(sql, p)]


def created_after(records: Records, after: tuple[str, str] | None, *, limit: int) -> list[tuple[str, str]]:
    """(incident id, created_at) of incidents created after `after`, oldest first (the index's catch-up)."""
    p = Params()
    sql = "SELECT incident_id, created_at FROM incidents"
    if after is not None:
        # a row value: one range of incidents_newest (an OR of its halves read the index from its start)
        sql += f" WHERE (created_at, incident_id) > ({p.each(after)})"
    sql += f" ORDER BY created_at, incident_id LIMIT {p(int(limit))}"
    return [(r["incident_id"], r["created_at"]) for r in records.query(sql, p)]
