"""The clock: one seam for the time, so tests move time forward instead of rewriting timestamps.

The records store holds the engine's clock (`Records(path, clock=...)`, `engine.records.clock`);
everything that stamps or compares a time in the engine reads it there. Stored times are ISO 8601
UTC strings with microseconds, so they sort as text.
"""
from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware."""
        ...


class SystemClock:
    """The machine's clock, in UTC."""

    def now(self) -> datetime:
        return datetime.now(timezone.utc)


class ManualClock:
    """A clock that moves only when told (tests): starts at `start` (default: the system's now)."""

    def __init__(self, start: datetime | None = None):
        start = start or datetime.now(timezone.utc)
        if start.tzinfo is None:
            raise ValueError("ManualClock needs a timezone-aware start")
        self._now = start
        self._lock = threading.Lock()  # a poller thread and the test read and move it at once

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, delta: timedelta | None = None, *, seconds: float = 0, minutes: float = 0,
                hours: float = 0) -> datetime:
        """Move forward by `delta` (or the given seconds / minutes / hours); returns the new now."""
        step = (delta or timedelta()) + timedelta(seconds=seconds, minutes=minutes, hours=hours)
        with self._lock:
            self._now += step
            return self._now

    def set(self, when: datetime) -> None:
        with self._lock:
            self._now = when


def now() -> datetime:
    """The system time in UTC, for code with no records store (and so no engine clock) at hand."""
    return datetime.now(timezone.utc)


def iso(dt: datetime) -> str:
    """How times are stored: UTC, microseconds, so the text sorts like the time."""
    return dt.astimezone(timezone.utc).isoformat(timespec="microseconds")


def parse_iso(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None
