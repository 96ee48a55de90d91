"""`file:PATH`: tail a log file, or every log file in a folder (pipeline/ingest/tail.py).

The poller's reads are not final: a partial last line waits for its newline, the last record
waits for its continuation lines until the file is quiet, and a rotated file's leftovers wait
until it has been quiet for a while.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from pipeline.ingest.reading import Parsing
from pipeline.ingest.tail import BATCH_LINES, ROTATED_GRACE_SECONDS, SETTLE_SECONDS, Tailer
from pipeline.sources import Batch


class FileSource:
    """Tails a JSONL file or a folder of them."""

    def __init__(self, path: Path, *, max_bytes: int, batch_lines: int = BATCH_LINES,
                 rotated_grace: float = ROTATED_GRACE_SECONDS, clock: Callable[[], float] = time.time,
                 parsing: Parsing | None = None, settle: float = SETTLE_SECONDS):
        self.tailer = Tailer(path, max_bytes=max_bytes, batch_lines=batch_lines, rotated_grace=rotated_grace,
                             clock=clock, parsing=parsing, settle=settle)
        self.path = self.tailer.path
        self.name = f"file:{self.path}"

    def read(self, cursor: str | None) -> Batch:
        """Complete lines appended since the cursor, oldest files' leftovers first."""
        tail = self.tailer.read(cursor)
        return Batch(items=tail.items, cursor=tail.cursor, more=tail.more, lag_seconds=tail.lag_seconds)
