"""Related incidents' SQL: past incidents of one fingerprint (the Drain template of the opening
line), newest first, in keyset pages off `incidents_fingerprint (fingerprint, created_at)`: one
range of one index, however many incidents the store holds. And the keyset walk the evidence
index catches up with."""
from __future__ import annotations

from pipeline.store.records import Records

COLUMNS = "incident_id, created_at"


def same_fingerprint(records: Records, fingerprint: str, *, exclude: str, limit: int,
                     before: tuple[str, str] | None = None) -> list[str]:
    """Incident ids of the fingerprint, newest first, older than `before` (created_at, incident_id)."""
    sql = "SELECT incident_id, created_at FROM incidents WHERE fingerprint = ? AND incident_id <> ?"
    params: list = [fingerprint, exclude]
    if before is not None:
        sql += " AND (created_at < ? OR (created_at = ? AND incident_id < ?))"
        params += [before[0], before[0], before[1]]
    sql += " ORDER BY created_at DESC, incident_id DESC LIMIT ?"
    params.append(int(limit))
    return [r["incident_id"] for r in records.query(sql, params)]


def created_after(records: Records, after: tuple[str, str] | None, *, limit: int) -> list[tuple[str, str]]:
    """(incident id, created_at) of incidents created after `after`, oldest first (the index's catch-up)."""
    sql = "SELECT incident_id, created_at FROM incidents"
    params: list = []
    if after is not None:
        sql += " WHERE created_at > ? OR (created_at = ? AND incident_id > ?)"
        params += [after[0], after[0], after[1]]
    sql += " ORDER BY created_at, incident_id LIMIT ?"
    params.append(int(limit))
    return [(r["incident_id"], r["created_at"]) for r in records.query(sql, params)]
