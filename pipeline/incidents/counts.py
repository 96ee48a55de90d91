"""What one store call added (CONTRACT §5 `ingest --json`): `Incidents.store_batch`'s answer."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class IngestCounts:
    """What one store call added (CONTRACT §5 `ingest --json`)."""

    events: int = 0
    rejected: int = 0
    redacted: int = 0  # secrets masked in the lines read (pipeline/redaction.py), stored or not
    incidents_new: set[str] = field(default_factory=set)
    incidents_updated: set[str] = field(default_factory=set)

    def add(self, other: "IngestCounts") -> None:
        self.events += other.events
        self.rejected += other.rejected
        self.redacted += other.redacted
        self.incidents_new |= other.incidents_new
        self.incidents_updated |= other.incidents_updated - self.incidents_new

    def as_json(self) -> dict[str, Any]:
        counts = {
            "events": self.events,
            "rejected": self.rejected,
            "incidents_new": len(self.incidents_new),
            "incidents_updated": len(self.incidents_updated - self.incidents_new),
        }
        return {**counts, "redacted": self.redacted} if self.redacted else counts
