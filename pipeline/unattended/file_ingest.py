"""`python -m pipeline ingest PATH`: store a JSONL file's (or a folder's files') new lines through
the one file tailer, then run what needs running.

Each file keeps its own cursor, keyed `file:<resolved path>` as `ingest` always keyed it, so
ingesting a folder and then one of its files (or the reverse) reads nothing twice. Ingest reads
are final: a file handed to `ingest` is complete, so its unterminated last line is consumed.
"""
from __future__ import annotations

from pathlib import Path

from pipeline.engine import Engine
from pipeline.engine.runner import run_pending
from pipeline.errors import UsageError
from pipeline.ingest.events import iter_paths
from pipeline.composition import parsing_for
from pipeline.ingest.tail import BATCH_LINES, Tailer
from pipeline.incidents.batch import IngestCounts

# batches a final read stores in one transaction: a commit of 500-line batches was a tenth of ingest's
# CPU (its pages of randomly keyed ids written again for every batch); a group of them is decided
# batch by batch as before, so the same lines heal, open and join the same incidents
GROUP_BATCHES = 10


def ingest_path(engine: Engine, path: Path, *, on_batch=None) -> IngestCounts:
    """Read events from a JSONL file or folder, store them once, and run what needs running."""
    files = iter_paths(Path(path))
    if not files:
        raise UsageError(f"no log files (.jsonl, .json, .log) in {path}")
    counts = IngestCounts()
    for file in files:
        counts.add(ingest_file(engine, file, on_batch=on_batch))
    run_pending(engine)
    return counts


def ingest_file(engine: Engine, file: Path, *, batch_lines: int = BATCH_LINES, on_batch=None,
                group: int = GROUP_BATCHES) -> IngestCounts:
    """Store one file's new lines in batches, `group` batches to a transaction (each decided as
    alone: `Incidents.store_batches`); the cursor advances with each stored transaction, after
    which `on_batch(records)` is told, for each batch it held, how many records (events and dead
    letters) that was."""
    file = Path(file).resolve()
    source = f"file:{file}"
    tailer = Tailer(file, max_bytes=engine.settings.max_event_bytes, final=True, batch_lines=batch_lines,
                    parsing=parsing_for(engine.settings))
    counts = IngestCounts()
    cursor = engine.records.cursor(source)
    more = True
    while more:
        batches: list[tuple[list, tuple[str, str] | None]] = []
        while more and len(batches) < max(1, group):
            tail = tailer.read(cursor)
            batches.append((tail.items, (source, tail.cursor) if tail.cursor else None))
            cursor, more = tail.cursor or cursor, tail.more
        counts.add(engine.incidents.store_batches(batches))
        if on_batch is not None:
            for items, _ in batches:
                on_batch(len(items))
    return counts
