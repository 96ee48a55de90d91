"""The one file tailer: `ingest` reads files through it to the end, the `file:PATH` source tails them.

The cursor remembers, per file, its inode, the byte offset after the last consumed line and a
hash of the file's first bytes. Between reads a file may
- grow: read on from the offset; a partial last line waits until its newline arrives, unless
  the tailer is `final` (ingest) and the file is finished: nobody has written to it for `settle`
  seconds and no process holds it open for writing (`writers`; a logger that flushes partial
  lines may pause mid-line for minutes). A final read of a file whose last line is not finished
  waits (up to twice `settle`) for its writer to finish it, and then holds it back like the
  poller's, for the next `ingest` to read whole. The poller reads a file's unterminated last
  line (a live or a rotated file's) only once the file is finished and quiet for `rotated_grace`;
- be truncated (smaller than the offset, or its first bytes changed): read again from 0;
- be rotated (renamed, a new file created at its path): the old inode is found by a scan of
  its folder and finished first, then the new file is read from 0;
- be renamed to another tracked name in the folder: it keeps its offset.
Records are read by `reading.LogFile` (any text format, continuation lines joined): the last
record of a growing file is held back (the offset stays at its first line) until the next record
starts or the file has been quiet for `settle` seconds, so a stack trace still being written is
never cut in two.
A cursor in the format `ingest` wrote before (`inode:head:offset`) is read and converted.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Union

from pipeline.errors import SourceError
from pipeline.ingest.events import DeadLetter, iter_paths
from pipeline.ingest.reading import LogFile, Parsing
from pipeline.ingest.writers import open_for_writing
from pipeline.state import LogEvent

Item = Union[LogEvent, DeadLetter]
BATCH_LINES = 500
HEAD_BYTES = 256
# A rotated file's writer may keep appending until it reopens its log; its unterminated last
# line is consumed only once the file has been quiet this long.
ROTATED_GRACE_SECONDS = 30.0
# A record's continuation lines (a stack trace) are written within moments of its first line.
SETTLE_SECONDS = 2.0
_WRITER_RECHECK = 0.2  # seconds between looks at a paused writer's file during a final read's wait


@dataclass
class _Entry:
    path: str
    ino: int
    off: int
    head: str
    rotated: bool = False

    def as_json(self) -> dict:
        return {"path": self.path, "ino": self.ino, "off": self.off, "head": self.head, "rotated": self.rotated}


@dataclass(frozen=True)
class Tail:
    """What one read delivered, and the cursor that covers it (None: unchanged)."""

    items: list[Item]
    cursor: str | None
    more: bool  # capped at the batch size: more is ready now
    lag_seconds: float


class Tailer:
    """Tails a log file in any format `reading.LogFile` reads, or a folder's log files
    (`*.log`, `*.jsonl`, `*.json`); see the module docstring."""

    def __init__(self, path: Path, *, max_bytes: int, final: bool = False, batch_lines: int = BATCH_LINES,
                 rotated_grace: float = ROTATED_GRACE_SECONDS, clock: Callable[[], float] = time.time,
                 parsing: Parsing | None = None, settle: float = SETTLE_SECONDS):
        self.path = Path(path).absolute()
        self.parsing = parsing or Parsing()
        self.settle = settle
        self._files: dict[str, LogFile] = {}
        self.max_bytes = max_bytes
        self.final = final
        self.batch_lines = batch_lines
        self.rotated_grace = rotated_grace
        self.clock = clock

    def read(self, cursor: str | None) -> Tail:
        """Lines appended since the cursor, oldest files' leftovers first, at most `batch_lines`."""
        entries = _load(cursor, self.path)
        live = self._live_files()
        if not live and not entries:
            if self.path.is_dir():  # a folder its writers have not written a log into yet: nothing to read
                return Tail(items=[], cursor=None, more=False, lag_seconds=0.0)
            raise SourceError(f"no such file or folder: {self.path}")
        items: list[Item] = []
        kept: list[_Entry] = []
        live_inodes = {st.st_ino: path for path, st in live.items()}
        adopted: dict[str, _Entry] = {}
        regular: dict[str, _Entry] = {}
        capped_at: float | None = None

        # 1. Leftovers of files that were rotated away: older lines than any live file holds.
        for entry in entries:
            st = live.get(entry.path)
            if not entry.rotated and st is not None and st.st_ino == entry.ino:
                regular[entry.path] = entry
            elif not entry.rotated and entry.ino in live_inodes:
                adopted[live_inodes[entry.ino]] = entry  # renamed to another tracked name
            else:
                old = _find_inode(Path(entry.path).parent, entry.ino)
                mtime = _mtime(old) if old is not None else None
                if old is None or mtime is None:
                    continue  # deleted: nothing more can be read from it
                if len(items) >= self.batch_lines:
                    kept.append(entry)
                    capped_at = capped_at or mtime
                    continue
                quiet = self.final or self.clock() - mtime > self.rotated_grace
                off, got, capped = self._read_file(old, entry.off, final=quiet, budget=self.batch_lines - len(items))
                items += got
                # a quiet file is finished unless its writer still holds it mid-line (`_finished`): then
                # its unterminated line is left behind the offset, and the entry kept for it
                if capped or not quiet or off < (_size(old) or 0):
                    kept.append(_Entry(entry.path, entry.ino, off, entry.head, rotated=True))
                if capped:
                    capped_at = mtime

        # 2. Live files, from their offsets (or from 0 when new, truncated or replaced).
        for path in sorted(live):
            st = live[path]
            entry = regular.get(path) or adopted.get(path)
            start = entry.off if entry and entry.off <= st.st_size and _head(Path(path), entry.off) == entry.head else 0
            if len(items) >= self.batch_lines:
                kept.append(_Entry(path, st.st_ino, start, _head(Path(path), start)))
                if st.st_size > start:
                    capped_at = capped_at or st.st_mtime
                continue
            # a live file quiet for `rotated_grace` with unread bytes is read as finished (its unterminated
            # last line too, unless a process holds it open for writing): a copied or closed log that
            # does not end in a newline kept its last line unread, and the poller lagging, for ever
            finished = self.final or (st.st_size > start and self.clock() - st.st_mtime > self.rotated_grace)
            off, got, capped = self._read_file(Path(path), start, final=finished,
                                               budget=self.batch_lines - len(items))
            items += got
            kept.append(_Entry(path, st.st_ino, off, _head(Path(path), off)))
            if capped:
                capped_at = capped_at or st.st_mtime

        new_cursor = json.dumps({"files": [e.as_json() for e in kept]}, sort_keys=True)
        lag = 0.0 if capped_at is None else max(0.0, self.clock() - capped_at)
        return Tail(items=items, cursor=None if new_cursor == cursor else new_cursor,
                    more=capped_at is not None, lag_seconds=lag)

    def _live_files(self) -> dict[str, os.stat_result]:
        if not self.path.exists():
            return {}  # a file between rotation and re-creation, or not created yet
        files = {}
        for p in iter_paths(self.path):
            try:
                files[str(p.absolute())] = p.stat()
            except FileNotFoundError:
                continue  # rotated away between listing and stat: found by inode next time
        return files

    def _read_file(self, path: Path, start: int, *, final: bool, budget: int) -> tuple[int, list[Item], bool]:
        """Up to `budget` items from `start`; returns the offset after them and whether capped."""
        log = self._files.get(str(path))
        if log is None:
            log = self._files[str(path)] = LogFile(path, max_bytes=self.max_bytes, parsing=self.parsing)
        if final and not self._finished(path, wait=self.final):
            final = False  # its writer is mid-line: hold the unterminated line back (module doc)
        mtime = _mtime(path)
        settled = final or (mtime is not None and self.clock() - mtime > self.settle)
        try:
            read = log.read(start, final=final, settled=settled, budget=budget)
        except SourceError:
            if path.exists():
                raise
            return start, [], False  # gone since the folder was listed: a rotated one is found by inode next read
        return read.offset, read.items, read.capped


    def _finished(self, path: Path, *, wait: bool) -> bool:
        """Whether a file read as final is complete: it ends with a newline, or nobody has written
        to it for `settle` seconds and no process holds it open for writing (`writers`). `ingest`
        waits for that (at most twice `settle`); a rotated file's read in the poller does not."""
        waited_until = time.monotonic() + (2 * self.settle if wait else 0.0)
        while True:
            try:
                st = path.stat()
                with path.open("rb") as f:
                    f.seek(max(st.st_size - 1, 0))
                    last = f.read(1)
            except OSError:
                return True  # gone: the read that follows says so
            quiet_for = self.clock() - st.st_mtime
            if not last or last == b"\n":
                return True
            if quiet_for > self.settle:
                if not open_for_writing(path):
                    return True
                quiet_for = self.settle - _WRITER_RECHECK  # a writer paused mid-line: look again shortly
            left = waited_until - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(self.settle - quiet_for + 0.05, left))


def _load(cursor: str | None, path: Path) -> list[_Entry]:
    if not cursor:
        return []
    legacy = _LEGACY_CURSOR.fullmatch(cursor)
    if legacy:
        return _from_legacy(path, int(legacy["ino"]), legacy["head"], int(legacy["off"]))
    try:
        data = json.loads(cursor)
        return [_Entry(str(e["path"]), int(e["ino"]), int(e["off"]), str(e["head"]), bool(e.get("rotated")))
                for e in data["files"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise SourceError(f"unreadable file cursor ({exc}); reset it to re-read from the start") from exc


def _head(path: Path, offset: int) -> str:
    """A hash of the file's first bytes (up to `offset`): a changed head means a new file."""
    try:
        with open(path, "rb") as f:
            data = f.read(min(offset, HEAD_BYTES))
    except OSError:
        return ""
    return hashlib.sha1(data).hexdigest()[:16]


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def _find_inode(folder: Path, ino: int) -> Path | None:
    """The file in `folder` that has inode `ino`, wherever it was renamed to."""
    try:
        with os.scandir(folder) as it:
            for entry in it:
                if entry.is_file(follow_symlinks=False) and entry.inode() == ino:
                    return Path(entry.path)
    except OSError:
        return None
    return None


# `ino:head:offset`, written for one file by `ingest` before it shared this tailer. Its head was a
# 12-digit sha1 of the file's first 256 bytes as they were when it ingested.
_LEGACY_CURSOR = re.compile(r"(?P<ino>\d+):(?P<head>[0-9a-f]{12}):(?P<off>\d+)")


def _from_legacy(path: Path, ino: int, head: str, off: int) -> list[_Entry]:
    """The entry an old `ingest` cursor stands for: resume at its offset when the file is still the
    one it read; another inode is a rotated file (finished by inode, like any); a rewrite starts over."""
    try:
        with open(path, "rb") as f:
            first = f.read(HEAD_BYTES)
        same = os.stat(path).st_ino == ino
    except OSError:
        first, same = b"", False
    # a file shorter than HEAD_BYTES then was hashed whole; it may have grown since
    heads = {hashlib.sha1(first).hexdigest()[:12], hashlib.sha1(first[:off]).hexdigest()[:12]}
    if same and head not in heads:
        return []  # rewritten in place: read it again from 0 (event ids keep that free of duplicates)
    return [_Entry(str(path), ino, off, _head(path, off) if same else "")]
