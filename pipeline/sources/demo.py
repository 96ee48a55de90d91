"""`demo`: replays the bundled sample day (samples/pos-day.jsonl) at compressed time.

The replay clock starts at the first event that opens an incident, so the quiet lead-in and the
first burst of errors arrive on the first poll (a new user sees incidents within seconds), and
it runs INCIDENTIQ_DEMO_SPEED times faster than real time. Event times are kept as they are in the
sample, so the demo and `ingest samples/pos-day.jsonl` yield the same events and incidents.
The cursor holds the byte offset after the last delivered line and that event's time: a
restart neither replays what was delivered nor dumps the rest at once, it goes on from there.
"""
from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path
from typing import Callable

from pipeline.errors import SourceError, UsageError
from pipeline.ingest.reading import LogFile
from pipeline.incidents.opening import opens_incident
from pipeline.sources import Batch, Item
from pipeline.state import LogEvent

DEFAULT_SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "pos-day.jsonl"
BATCH_LINES = 500


class DemoSource:
    """The bundled sample stream, paced by a compressed clock."""

    name = "demo"

    def __init__(self, path: Path = DEFAULT_SAMPLE, *, speed: float, max_bytes: int,
                 batch_lines: int = BATCH_LINES, clock: Callable[[], float] = time.time):
        if speed <= 0:
            raise UsageError(f"INCIDENTIQ_DEMO_SPEED must be positive, not {speed}")
        self.path = Path(path)
        self.speed = speed
        self.max_bytes = max_bytes
        self.batch_lines = batch_lines
        self.clock = clock
        self._anchor: tuple[float, datetime] | None = None  # (wall time, sample time) pinned together
        # read as `ingest` reads it, so the demo and `ingest samples/pos-day.jsonl` store the same events
        self._log = LogFile(self.path, max_bytes=max_bytes)

    def read(self, cursor: str | None) -> Batch:
        """The sample lines that are due by now on the replay clock."""
        offset, last_time = _load(cursor)
        if not self.path.is_file():
            raise SourceError(f"demo sample not found: {self.path}")
        now = self.clock()
        items: list[Item] = []
        lag = 0.0
        more = False
        scan = self._log.scan(offset, final=True, settled=True)
        reached_end = True
        for item, end in scan:
            if isinstance(item, LogEvent):
                if self._anchor is None:
                    self._anchor = (now, last_time or self._first_error_time(offset) or item.time)
                due = self._due(item.time)
                if due > now:
                    reached_end = False
                    break
                lag = max(lag, now - due)
                last_time = item.time if last_time is None else max(last_time, item.time)
            items.append(item)
            if end is None:
                continue  # not a place a read may stop (LogFile.scan)
            offset = end
            if len(items) >= self.batch_lines:
                more, reached_end = True, False
                break
        scan.close()
        if reached_end:
            offset = self._log.resume  # trailing blank lines too
        new_cursor = json.dumps({"offset": offset, "last_time": last_time.isoformat() if last_time else None})
        return Batch(items=items, cursor=None if new_cursor == cursor else new_cursor, more=more, lag_seconds=lag)

    def _first_error_time(self, offset: int) -> datetime | None:
        for item, _end in LogFile(self.path, max_bytes=self.max_bytes).scan(offset, final=True, settled=True):
            if isinstance(item, LogEvent) and opens_incident(item):
                return item.time
        return None

    def _due(self, sample_time: datetime) -> float:
        """The wall time at which a sample event is delivered."""
        wall0, sample0 = self._anchor
        return wall0 + (sample_time - sample0).total_seconds() / self.speed


def _load(cursor: str | None) -> tuple[int, datetime | None]:
    if not cursor:
        return 0, None
    try:
        data = json.loads(cursor)
        last = data.get("last_time")
        return int(data["offset"]), datetime.fromisoformat(last) if last else None
    except (ValueError, KeyError, TypeError) as exc:
        raise SourceError(f"unreadable demo cursor ({exc})") from exc
