"""The SLA: how long a reviewer has to decide on an incident, by its severity, from its base.

The base is when the incident was opened here (`opened`) by default: a reviewer cannot decide on
an incident before it exists, and a log read days after it was written (a backfill, an old file
handed to `ingest`) would otherwise arrive already overdue, its whole inbox escalated for the
log's age. INCIDENTIQ_SLA_FROM=first_seen counts from the first error's time instead (the clock
runs from when the customer-facing failure began) for incidents read while they happen; an
incident whose log was already older than its SLA when it was opened is **backfilled** and
counts from its opening under either base. Hours per severity come from INCIDENTIQ_SLA_HOURS.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Mapping

SLA_HOURS = {"critical": 1, "high": 4, "medium": 24, "low": 72}
DEFAULT_SEVERITY = "medium"  # an incident's severity until its analysis says otherwise


def sla_deadline(base: datetime, severity: str, hours: Mapping[str, float] | None = None) -> datetime:
    """When a reviewer must have decided, by severity, counted from `base`."""
    table = hours or SLA_HOURS
    return base + timedelta(hours=table.get(severity, table.get(DEFAULT_SEVERITY, 24)))


def sla_base(*, first_seen: datetime, opened: datetime, sla_from: str = "opened") -> datetime:
    """The instant the SLA counts from: the first error (`first_seen`) or the incident's opening."""
    return opened if sla_from == "opened" else first_seen


@dataclass(frozen=True)
class SlaPolicy:
    """The SLA an incident's deadline is computed with: hours per severity, counted from `sla_from`."""

    hours: Mapping[str, float] = field(default_factory=lambda: dict(SLA_HOURS))
    sla_from: str = "opened"

    def backfilled(self, *, first_seen: datetime, opened: datetime, severity: str) -> bool:
        """Whether the incident's log was already past its SLA (from the first error) when it was opened."""
        return sla_deadline(first_seen, severity, self.hours) <= opened

    def deadline(self, *, first_seen: datetime, opened: datetime, severity: str) -> datetime:
        """When a reviewer must have decided on an incident of this severity (a backfilled one:
        from its opening, whatever the base)."""
        if self.backfilled(first_seen=first_seen, opened=opened, severity=severity):
            return sla_deadline(opened, severity, self.hours)
        return sla_deadline(sla_base(first_seen=first_seen, opened=opened, sla_from=self.sla_from), severity,
                            self.hours)

    def due(self, *, first_seen: datetime, opened: datetime, severity: str) -> tuple[datetime, bool]:
        """The deadline and whether the incident is backfilled, as its record keeps them."""
        return (self.deadline(first_seen=first_seen, opened=opened, severity=severity),
                self.backfilled(first_seen=first_seen, opened=opened, severity=severity))
