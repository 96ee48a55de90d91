"""The SLA: how long a reviewer has to decide on an incident, by its severity."""
from __future__ import annotations

from datetime import datetime, timedelta

SLA_HOURS = {"critical": 1, "high": 4, "medium": 24, "low": 72}
DEFAULT_SEVERITY = "medium"  # an incident's severity until its analysis says otherwise


def sla_deadline(created_at: datetime, severity: str) -> datetime:
    """When a reviewer must have decided, by severity."""
    return created_at + timedelta(hours=SLA_HOURS.get(severity, 24))
