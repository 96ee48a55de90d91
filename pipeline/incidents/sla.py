"""The SLA: how long a reviewer has to decide on an incident, by its severity, from its base.

The base is the first error's time (`first_seen`) by default: the clock runs from when the
customer-facing failure began, not from when our poller happened to read it. The demo, whose
sample day lies in the past, counts from when the incident was opened here instead
(INCIDENTIQ_SLA_FROM). Hours per severity come from INCIDENTIQ_SLA_HOURS.
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


def sla_base(*, first_seen: datetime, opened: datetime, sla_from: str = "first_seen") -> datetime:
    """The instant the SLA counts from: the first error (`first_seen`) or the incident's opening."""
    return opened if sla_from == "opened" else first_seen


@dataclass(frozen=True)
class SlaPolicy:
    """The SLA an incident's deadline is computed with: hours per severity, counted from `sla_from`."""

    hours: Mapping[str, float] = field(default_factory=lambda: dict(SLA_HOURS))
    sla_from: str = "first_seen"

    def deadline(self, *, first_seen: datetime, opened: datetime, severity: str) -> datetime:
        """When a reviewer must have decided on an incident of this severity."""
        return sla_deadline(sla_base(first_seen=first_seen, opened=opened, sla_from=self.sla_from), severity,
                            self.hours)
