"""Who is on an incident (assignee) and what people said about it (comments), each change audited
in the same transaction."""
from __future__ import annotations

from typing import Any

from pipeline.clock import iso
from pipeline.errors import IncidentNotFound
from pipeline.store.records import Records


def set_assignee(records: Records, incident_id: str, assignee: str | None, *, audit: dict[str, Any]) -> str | None:
    """Assign (or, with None, unassign) the incident; returns who had it before."""
    stamp = iso(records.clock.now())
    with records.transaction() as conn:
        row = conn.execute("SELECT assignee FROM incidents WHERE incident_id = $1", (incident_id,)).fetchone()
        if row is None:
            raise IncidentNotFound(incident_id)
        conn.execute("UPDATE incidents SET assignee = $1, assigned_at = $2 WHERE incident_id = $3",
                     (assignee, stamp if assignee else None, incident_id))
        records.add_audit(conn=conn, **{**audit, "before": {"assignee": row["assignee"]},
                                        "after": {"assignee": assignee}})
        previous: str | None = row["assignee"]
        return previous


def add_comment(records: Records, incident_id: str, *, author: str, author_name: str, auth: str, text: str,
                audit: dict[str, Any]) -> dict[str, Any]:
    """Store a plain-text comment (rendered inert by the UI) and audit it; returns it."""
    stamp = iso(records.clock.now())
    with records.transaction() as conn:
        if conn.execute("SELECT 1 FROM incidents WHERE incident_id = $1", (incident_id,)).fetchone() is None:
            raise IncidentNotFound(incident_id)
        comment_id = conn.execute("INSERT INTO comments(incident_id, author, author_name, auth, text, at)"
                                  " VALUES ($1,$2,$3,$4,$5,$6) RETURNING id",
                                  (incident_id, author, author_name, auth, text, stamp)).fetchall()[0][0]
        records.add_audit(conn=conn, **audit)
    return {"id": comment_id, "by": author, "name": author_name, "auth": auth, "text": text, "at": stamp}


def comments(records: Records, incident_id: str, *, limit: int = 200) -> list[dict[str, Any]]:
    """The incident's comments, oldest first."""
    rows = records.query("SELECT id, author, author_name, auth, text, at FROM comments WHERE incident_id = $1"
                         " ORDER BY id LIMIT $2", (incident_id, limit))
    return [{"id": r["id"], "by": r["author"], "name": r["author_name"], "auth": r["auth"], "text": r["text"],
             "at": r["at"]} for r in rows]
