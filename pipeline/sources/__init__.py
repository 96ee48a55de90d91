"""Log sources behind one small interface, chosen by INCIDENTIQ_SOURCE (CONTRACT §6).

A source is stateless between reads except for its cursor: `read(cursor)` returns the items
found after that cursor and the cursor that covers them. The poller stores both in one
transaction (`Incidents.store_batch`), so the cursor only moves once the events it covers are
stored, and a crash re-reads at most what was not stored; event ids by position
(pipeline/ingest/event_ids.py) make that re-read free of duplicates.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, Union

from pipeline.config import Settings
from pipeline.errors import SourceError, UsageError
from pipeline.ingest.events import DeadLetter
from pipeline.state import LogEvent

Item = Union[LogEvent, DeadLetter]


class SourceAuthError(SourceError):
    """The log platform refused our credentials; retried, and shown until fixed."""


@dataclass(frozen=True)
class Batch:
    """What one read delivered, and the cursor to store in the same transaction as the items."""

    items: list[Item] = field(default_factory=list)
    cursor: str | None = None  # None: the cursor does not change
    more: bool = False  # more is ready right now: read again without waiting
    # the backlog after this read (CONTRACT §5 `poll --once --json`): the age of the oldest line not
    # read yet (0 when none waits; a lower bound for a file), and how much waits, where the source knows
    lag_seconds: float | None = None
    lines_behind: int | None = None
    bytes_behind: int | None = None


class Source(Protocol):
    """A log source: a stable name (it keys the cursor) and a read from a cursor."""

    name: str

    def read(self, cursor: str | None) -> Batch: ...


def open_source(spec: str, settings: Settings) -> Source:
    """The source for a spec: `demo`, `file:PATH` or `splunk`."""
    spec = (spec or "").strip()
    if spec == "demo":
        from pipeline.sources.demo import DemoSource

        return DemoSource(speed=settings.demo_speed, max_bytes=settings.max_event_bytes)
    if spec.startswith("file:") and spec[5:].strip():
        from pipeline.sources.file import FileSource

        from pipeline.ingest.reading import parsing_of
        from pipeline.redaction import redact

        return FileSource(Path(spec[5:].strip()), max_bytes=settings.max_event_bytes,
                          parsing=parsing_of(settings, scrub=redact),
                          batch_lines=settings.poll_batch_lines)
    if spec == "splunk":
        from pipeline.sources.splunk import SplunkSource

        return SplunkSource.from_settings(settings)
    raise UsageError(f"INCIDENTIQ_SOURCE must be demo, file:PATH or splunk, not {spec!r}")


__all__ = ["Batch", "Item", "Source", "SourceAuthError", "open_source"]
