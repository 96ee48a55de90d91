"""`file:PATH`: tail a log file, or every log file in a folder (pipeline/ingest/tail.py).

The poller's reads are not final: a partial last line waits for its newline however long its
writer pauses, the last record waits for its continuation lines until the file is quiet, and a
rotated file's leftovers wait until it has been quiet for a while and nobody writes to it.

Each read also says what is left behind its cursor (`Batch.bytes_behind`, `lines_behind` and
`lag_seconds`): the bytes after each file's offset, the newlines among them (counted over up to
`COUNT_BYTES` after the offset, the rest estimated at the same density), and the age of the oldest
unread byte. The count is kept between reads: a read counts only the bytes its batch consumed and
those appended (or newly in reach) since, never the whole unread file again. A file does not say when a byte was written, so that age is a lower bound: the later of
when this source first saw the file grow past the offset and the file's last write.
"""
from __future__ import annotations

import bisect
import json
import os
import time
from pathlib import Path
from typing import Callable

from pipeline.ingest.reading import Parsing
from pipeline.ingest.tail import BATCH_LINES, ROTATED_GRACE_SECONDS, SETTLE_SECONDS, Tailer
from pipeline.sources import Batch

COUNT_BYTES = 16 * 1024 * 1024  # newlines counted per read; beyond, estimated
_CHUNK = 1024 * 1024
_SIGHTINGS = 4096  # sizes remembered per file, for the age of the oldest unread byte


class FileSource:
    """Tails a log file in any format the reader reads, or a folder's log files (`*.log`, `*.jsonl`,
    `*.json`)."""

    settles = True  # a tail: the poller holds its reads until their burst settles (unattended/settling.py)

    def __init__(self, path: Path, *, max_bytes: int, batch_lines: int = BATCH_LINES,
                 rotated_grace: float = ROTATED_GRACE_SECONDS, clock: Callable[[], float] = time.time,
                 parsing: Parsing | None = None, settle: float = SETTLE_SECONDS):
        self.tailer = Tailer(path, max_bytes=max_bytes, batch_lines=batch_lines, rotated_grace=rotated_grace,
                             clock=clock, parsing=parsing, settle=settle)
        self.path = self.tailer.path
        self.name = f"file:{self.path}"
        self.clock = clock
        # (path, inode) -> ascending (size, first seen at): when each size was first seen
        self._sightings: dict[tuple[str, int], tuple[list[int], list[float]]] = {}
        # (path, inode) -> the span [start, end) whose newlines were counted, and their count
        self._counted: dict[tuple[str, int], tuple[int, int, int]] = {}

    @property
    def batch_lines(self) -> int:
        """The most lines a read hands over (the poller grows it while the file is behind)."""
        return self.tailer.batch_lines

    @batch_lines.setter
    def batch_lines(self, lines: int) -> None:
        self.tailer.batch_lines = max(1, int(lines))

    def read(self, cursor: str | None) -> Batch:
        """Complete lines appended since the cursor, oldest files' leftovers first."""
        tail = self.tailer.read(cursor)
        bytes_behind, lines_behind, age = self._behind(tail.cursor or cursor)
        return Batch(items=tail.items, cursor=tail.cursor, more=tail.more, lag_seconds=max(tail.lag_seconds, age),
                     lines_behind=lines_behind, bytes_behind=bytes_behind)

    def _behind(self, cursor: str | None) -> tuple[int | None, int | None, float]:
        """(bytes, lines, age of the oldest byte) after the cursor's offsets, over its files."""
        try:
            entries = json.loads(cursor)["files"] if cursor else []
        except (ValueError, KeyError, TypeError):
            return None, None, 0.0  # the tailer refuses such a cursor itself
        now = self.clock()
        total_bytes = total_lines = 0
        age = 0.0
        budget = COUNT_BYTES
        counted, self._counted = self._counted, {}  # files the cursor no longer names are forgotten
        for entry in entries:
            path = _located(str(entry["path"]), int(entry["ino"]), bool(entry.get("rotated")))
            try:
                st = os.stat(path) if path else None
            except OSError:
                st = None
            if path is None or st is None or st.st_ino != int(entry["ino"]):
                continue
            off = int(entry["off"])
            behind = max(0, st.st_size - off)
            sizes, seen = self._sightings.setdefault((str(entry["path"]), st.st_ino), ([], []))
            if not sizes or st.st_size > sizes[-1]:
                sizes.append(st.st_size)
                seen.append(now)
            # the sightings of sizes up to the offset are read: the first one left held the oldest unread byte
            read = bisect.bisect_right(sizes, off)
            del sizes[:read], seen[:read]
            if len(sizes) > _SIGHTINGS:  # keep the oldest, thin out the rest
                del sizes[1::2], seen[1::2]
            key = (str(entry["path"]), st.st_ino)
            if key in counted:
                self._counted[key] = counted[key]
            if not behind:
                self._counted.pop(key, None)
                continue
            if sizes:
                age = max(age, now - seen[0])
            age = max(age, now - st.st_mtime)
            lines, budget = self._count(key, path, off, st.st_size, budget)
            total_bytes += behind
            total_lines += lines
        return total_bytes, total_lines, max(0.0, age)

    def _count(self, key: tuple[str, int], path: str, off: int, size: int, budget: int) -> tuple[int, int]:
        """The newlines after `off` (counted over up to COUNT_BYTES, estimated beyond), from the
        span counted by the last read: the bytes read since leave it, the bytes appended since
        join it, at most `budget` of them; returns the lines and the budget left."""
        start, end, lines = self._counted.get(key, (off, off, 0))
        if not start <= off <= end or size < end:  # a new file, a truncation, or a cursor moved back
            start, end, lines = off, off, 0
        if off > start:  # what the batch consumed leaves the count (or the rest is counted afresh)
            if off - start <= end - off:
                lines -= _newlines(path, start, off - start)
            else:
                lines = _newlines(path, off, end - off)
        reach = min(size, off + COUNT_BYTES, end + budget)
        if reach > end:
            lines += _newlines(path, end, reach - end)
            budget -= reach - end
            end = reach
        self._counted[key] = (off, end, lines)
        if end < size:  # estimated beyond the span at its density
            return (round(lines * (size - off) / (end - off)) if end > off else 0), budget
        return lines, budget


def _located(path: str, ino: int, rotated: bool) -> str | None:
    """Where the cursor's file is now: at its path, or (rotated away) found by inode in its folder."""
    if not rotated:
        return path
    try:
        with os.scandir(os.path.dirname(path)) as it:
            for item in it:
                if item.is_file(follow_symlinks=False) and item.inode() == ino:
                    return item.path
    except OSError:
        return None
    return None


def _newlines(path: str, offset: int, length: int) -> int:
    """The newlines in `length` bytes of the file from `offset`."""
    count = 0
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            while length > 0:
                chunk = f.read(min(_CHUNK, length))
                if not chunk:
                    break
                count += chunk.count(b"\n")
                length -= len(chunk)
    except OSError:
        return count
    return count
