"""The settle window (CONTRACT §2): lines read from a source are decided (stored, opening, joining
and healing incidents) once the burst they belong to has settled, not as the read happened to cut
them, so a log read a few lines at a time (a live tail, a small INCIDENTIQ_POLL_BATCH_LINES) opens the
incidents the same log read whole opens.

A read's lines are held until one of:
- the log went quiet: the next line read is `quiet` seconds of log time after the last held one (the
  held lines are decided, the new ones held in their turn), or nothing new was read for `quiet`
  seconds of the reader's clock (a live source that stopped writing), or the source has nothing more
  ready and the last held line was written `quiet` seconds ago or more by its own time (the end of a
  backlog: lines written long before; while more is ready, the lines after them may continue their burst);
- the held lines span `longest` seconds of log time, or were first held `longest` seconds ago by
  the reader's clock (a source that never pauses is decided at least that often);
- `cap` lines are held (a backlog is decided in batches of that size, as before);
- the source is read to its end and is final (`ingest` of a finished file).

Held lines are in memory only and the cursor stored with the decided lines is the one that covers
them, never the held ones: a process killed while it holds lines reads them again (nothing lost),
and a line is stored once (its batch and cursor in one transaction, as before).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable

from pipeline.ingest.events import DeadLetter

QUIET_SECONDS = 30.0  # INCIDENTIQ_SETTLE_SECONDS's default
LONGEST_SECONDS = 120.0
CAP_LINES = 500
# a line's time this far from the held lines' is another clock's (a time of day read without its date, a
# host's wrong clock): no pause or span is read from it
FAR_SECONDS = 3600.0


def _time(item: Any) -> datetime | None:
    return None if isinstance(item, DeadLetter) else getattr(item, "time", None)


def _gap(before: datetime | None, after: datetime | None) -> float:
    if before is None or after is None:
        return 0.0
    try:
        return (after - before).total_seconds()
    except TypeError:  # naive against aware: no gap is read from them
        return 0.0


@dataclass
class Settler:
    """One source's held lines (see the module docstring). `offer` each read; it returns the batches
    to store now, each with the cursor that covers it (None: the cursor stays)."""

    quiet: float = QUIET_SECONDS
    longest: float = LONGEST_SECONDS
    cap: int = CAP_LINES
    clock: Callable[[], float] = time.monotonic
    # the time now, to which a held line's own time is compared (None: never; the outage bed's reads,
    # where the log's times stand for the clock)
    utc: Callable[[], datetime] | None = lambda: datetime.now(timezone.utc)
    held: list[Any] = field(default_factory=list)
    cursor: str | None = None  # the read cursor that covers the held lines
    base: str | None = None  # the stored cursor the held lines follow
    _first_at: float = 0.0
    _last_at: float = 0.0
    _first_time: datetime | None = None
    _last_time: datetime | None = None

    def holding(self) -> bool:
        return bool(self.held)

    def follow(self, stored: str | None) -> str | None:
        """Where the next read starts, the source's stored cursor being `stored`: after the held lines
        when they follow it; else (it moved: another poller stored them, or their batch failed) from
        it, the held lines forgotten (they are read again)."""
        if self.held and self.base == stored:
            return self.cursor
        self._release()
        return stored

    def offer(self, items: list[Any], cursor: str | None, *, more: bool, final: bool,
              base: str | None = None) -> list[tuple[list[Any], str | None]]:
        """A read's `items` and the `cursor` after them (`more`: the source had more ready; `final`:
        it is finished once read to its end); `base`: the stored cursor the read started from
        when nothing was held. The batches to store now, in order."""
        now = self.clock()
        out: list[tuple[list[Any], str | None]] = []
        times = [t for t in map(_time, items) if t is not None]
        if self.held and times and self.quiet <= _gap(self._last_time, times[0]) <= FAR_SECONDS:
            out.append(self._release())  # the log went quiet before these lines: what it held has settled
            base = out[-1][1] or base
        if not self.held:
            if not items:
                return out + ([([], cursor)] if cursor is not None else [])
            self.base, self._first_at, self._first_time = base, now, None
        if items:
            self.held.extend(items)
            self._last_at = now
        for moment in times:
            if self._last_time is not None and abs(_gap(self._last_time, moment)) > FAR_SECONDS:
                continue  # another clock's
            self._first_time = self._first_time or moment
            if self._last_time is None or _gap(self._last_time, moment) > 0:
                self._last_time = moment
        if cursor is not None:
            self.cursor = cursor
        if self.held and ((final and not more) or len(self.held) >= self.cap
                          or _gap(self._first_time, self._last_time) >= self.longest
                          or now - self._first_at >= self.longest
                          or (not items and now - self._last_at >= self.quiet)
                          or (not more and self.utc is not None and _gap(self._last_time, self.utc()) >= self.quiet)):
            out.append(self._release())
        return out

    def _release(self) -> tuple[list[Any], str | None]:
        batch = (self.held, self.cursor)
        self.held, self.cursor, self.base = [], None, None
        self._first_time = self._last_time = None
        return batch


def settler_for(settle_seconds: float, *, log_clock: bool = False,
                clock: Callable[[], float] = time.time) -> Settler | None:
    """The settle window INCIDENTIQ_SETTLE_SECONDS asks for (None: 0, every read decided as read), by
    `clock` (the source's: epoch seconds). `log_clock`: no time passes but the log's own (a finished
    file read as if live: live_read.py)."""
    if not settle_seconds:
        return None
    if log_clock:
        return Settler(quiet=settle_seconds, longest=4 * settle_seconds, cap=CAP_LINES, clock=lambda: 0.0, utc=None)
    return Settler(quiet=settle_seconds, longest=4 * settle_seconds, cap=CAP_LINES, clock=clock,
                   utc=lambda: datetime.fromtimestamp(clock(), timezone.utc))
