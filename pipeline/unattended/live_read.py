"""A finished file read as the poller reads a live source (`python -m pipeline outages --batch-lines N`):
`batch_lines` lines a read, each read offered to the settle window (settling.py; INCIDENTIQ_SETTLE_SECONDS,
0: none, each read stored alone) and each batch it lets through stored as the poller stores one, the
first runs of the incidents a batch opened started before the next read, as the poller starts them.

No time passes between reads: the log's own times stand for the reader's clock (a live source's
lines arrive as they are written), so only the log's pauses and spans settle what is held.
"""
from __future__ import annotations

from pathlib import Path

from pipeline.composition import parsing_for
from pipeline.engine import Engine
from pipeline.engine import runner
from pipeline.incidents.batch import IngestCounts
from pipeline.ingest.tail import Tailer
from pipeline.unattended.settling import settler_for


def read_live(engine: Engine, file: Path, *, batch_lines: int, runs: bool = True) -> IngestCounts:
    """Store `file`'s lines as the poller would read them from a tail delivering `batch_lines` at a time."""
    file = Path(file).resolve()
    source = f"file:{file}"
    tailer = Tailer(file, max_bytes=engine.settings.max_event_bytes, final=True, batch_lines=batch_lines,
                    parsing=parsing_for(engine.settings))
    settler = settler_for(engine.settings.settle_seconds, log_clock=True)
    counts = IngestCounts()
    cursor = engine.records.cursor(source)
    more = True
    while more:
        tail = tailer.read(cursor)
        cursor, more = tail.cursor or cursor, tail.more
        batches = (settler.offer(tail.items, tail.cursor, more=more, final=True) if settler is not None
                   else [(tail.items, tail.cursor)])
        for items, covered in batches:
            stored = engine.incidents.store_batch(items, cursor=(source, covered) if covered else None)
            counts.add(stored)
            for incident_id in sorted(stored.incidents_new) if runs else ():
                runner.advance_run(engine, incident_id)
    return counts
