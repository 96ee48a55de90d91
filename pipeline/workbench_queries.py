"""Reads the workbench needs that the review service does not offer, on the indexed records store."""
from __future__ import annotations

from datetime import datetime

from pipeline.records import Records, iso, now
from pipeline.state import OPEN_STATUSES


def overdue_count(records: Records, at: datetime | None = None) -> int:
    """Open incidents past their SLA deadline (served by the incidents_inbox index)."""
    marks = ",".join("?" * len(OPEN_STATUSES))
    rows = records.query(f"SELECT count(*) AS n FROM incidents WHERE status IN ({marks}) AND sla_deadline < ?",
                         (*OPEN_STATUSES, iso(at or now())))
    return int(rows[0]["n"])
