"""Log sources behind one small interface, chosen by INCIDENTIQ_SOURCE (CONTRACT §6) in
pipeline/composition.py (`open_source`).

A source is stateless between reads except for its cursor: `read(cursor)` returns the items
found after that cursor and the cursor that covers them. The poller stores both in one
transaction (`Incidents.store_batch`), so the cursor only moves once the events it covers are
stored, and a crash re-reads at most what was not stored; event ids by position
(pipeline/ingest/event_ids.py) make that re-read free of duplicates.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, Union

from pipeline.errors import SourceError
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
    """A log source: a stable name (it keys the cursor) and a read from a cursor. A source that
    sizes its batches has a settable `batch_lines` (the most items a read hands over): the poller
    grows it while the source is behind (unattended/poller.py)."""

    name: str

    def read(self, cursor: str | None) -> Batch: ...


__all__ = ["Batch", "Item", "Source", "SourceAuthError"]
