"""`file:PATH`: tail a log file, or every log file in a folder (pipeline/ingest/tail.py).

The poller's reads are not final: a partial last line waits for its newline however long its
writer pauses, the last record waits for its continuation lines until the file is quiet, and a
rotated file's leftovers wait until it has been quiet for a while and nobody writes to it.

Each read also says what is left behind its cursor (`Batch.bytes_behind`, `lines_behind` and
`lag_seconds`): the bytes after each file's offset, the newlines among them (counted up to
`COUNT_BYTES` per read, the rest estimated at the same density), and the age of the oldest unread
byte. A file does not say when a byte was written, so that age is a lower bound: the later of
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
            if not behind:
                continue
            if sizes:
                age = max(age, now - seen[0])
            age = max(age, now - st.st_mtime)
            counted = min(behind, budget)
            lines = _newlines(path, off, counted) if counted else 0
            budget -= counted
            if counted < behind:
                lines = round(lines * behind / counted) if counted else 0
            total_bytes += behind
            total_lines += lines
        return total_bytes, total_lines, max(0.0, age)


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
