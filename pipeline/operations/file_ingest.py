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
from pipeline.ingest.reading import parsing_of
from pipeline.redaction import redact
from pipeline.ingest.tail import BATCH_LINES, Tailer
from pipeline.incidents.batch import IngestCounts


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


def ingest_file(engine: Engine, file: Path, *, batch_lines: int = BATCH_LINES, on_batch=None) -> IngestCounts:
    """Store one file's new lines in batches; the cursor advances with each stored batch, after
    which `on_batch(records)` is told how many records (events and dead letters) it held."""
    file = Path(file).resolve()
    source = f"file:{file}"
    tailer = Tailer(file, max_bytes=engine.settings.max_event_bytes, final=True, batch_lines=batch_lines,
                    parsing=parsing_of(engine.settings, scrub=redact))
    counts = IngestCounts()
    cursor = engine.records.cursor(source)
    while True:
        tail = tailer.read(cursor)
        counts.add(engine.incidents.store_batch(tail.items, cursor=(source, tail.cursor) if tail.cursor else None))
        cursor = tail.cursor or cursor
        if on_batch is not None:
            on_batch(len(tail.items))
        if not tail.more:
            return counts
