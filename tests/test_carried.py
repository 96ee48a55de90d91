"""Issue 35, session 59: one outage, one incident however a live read cut it. A source's batch starts from what its
recent batches joined, kept in memory (pipeline/incidents/carried.py): an error read one batch after the incident it
belongs to joins it by what only a batch knew (an address learnt from a host name, a process's line), as it does read
in one batch; after a restart the store is read back instead. `ingest`'s batches, and batches of no source, hold none."""
from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from pipeline.incidents.batch import Incidents
from pipeline.ingest.tail import Tailer
from pipeline.state import LogEvent
from pipeline.store.records import Records
from tests.support import BOTH_BACKENDS

ROOT = Path(__file__).resolve().parent.parent
T0 = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)
SOURCE = "file:/var/log/app.log"


def _event(n: int, seconds: float, service: str, message: str, *, host: str, **fields: str) -> LogEvent:
    return LogEvent(event_id=f"cut-{n}", time=T0 + timedelta(seconds=seconds), service=service, host=host,
                    level="ERROR", message=message, source="/var/log/app.log", position=f"/var/log/app.log@{n}",
                    fields=fields)


# the port a host name was dialled at, learnt by the first batch: the second's error names the machine by its address
LEARNT = ([_event(1, 0, "orders", "query failed: dial mongo-0.mongo.db.svc:27017: i/o timeout", host="app1")],
          [_event(2, 2, "stock", "connection 12 to 10.3.0.20:27017 closed", host="app2")])
# one process's error, and its next line half a second later naming nothing of its own
PROCESS = ([_event(3, 0, "klogind", "Authentication failed from 163.27.187.39 (163.27.187.39): Permission denied in"
                   " replay cache code", host="combo", pid="19272")],
           [_event(4, 0.5, "klogind", "Kerberos authentication failed", host="combo", pid="19272")])


def _incidents(records: Records) -> list[str]:
    return [row["incident_id"] for row in records.incidents()]


@pytest.mark.parametrize("batches", [LEARNT, PROCESS], ids=["learnt-address", "same-process"])
def test_an_outage_cut_between_two_reads_is_one_incident_as_read_in_one(tmp_path, batches):
    whole = Records(tmp_path / "whole.sqlite3")
    Incidents(whole).store_batch([*batches[0], *batches[1]], cursor=(SOURCE, "2"))
    assert len(_incidents(whole)) == 1
    records = Records(tmp_path / "cut.sqlite3")
    incidents = Incidents(records)
    incidents.store_batch(batches[0], cursor=(SOURCE, "1"))
    incidents.store_batch(batches[1], cursor=(SOURCE, "2"))
    (incident,) = _incidents(records)
    assert {e.event_id for e in records.events_of(incident)} == {e.event_id for b in batches for e in b}


RESTARTED = """
import sys
from pathlib import Path
from pipeline.incidents.batch import Incidents
from pipeline.ingest.tail import Tailer
from pipeline.store.records import Records
from tests.support import BOTH_BACKENDS
from tests.test_carried import LEARNT, PROCESS, SOURCE
batches = {"learnt-address": LEARNT, "same-process": PROCESS}[sys.argv[2]]
Incidents(Records(Path(sys.argv[1]))).store_batch(batches[1], cursor=(SOURCE, "2"))
"""


@pytest.mark.parametrize("name", ["learnt-address", "same-process"])
def test_after_a_restart_the_next_batch_joins_what_the_store_reads_back(tmp_path, name):
    batches = {"learnt-address": LEARNT, "same-process": PROCESS}[name]
    path = tmp_path / "app.sqlite3"
    Incidents(Records(path)).store_batch(batches[0], cursor=(SOURCE, "1"))
    # the next batch read by a new process: no memory, the source's earlier errors read back from the store
    subprocess.run([sys.executable, "-c", RESTARTED, str(path), name], cwd=ROOT, check=True, timeout=120)
    records = Records(path)
    (incident,) = _incidents(records)
    assert len(records.events_of(incident)) == 2


def test_an_incident_decided_between_two_reads_is_not_joined_from_memory(tmp_path):
    records = Records(tmp_path / "app.sqlite3")
    incidents = Incidents(records)
    incidents.store_batch(LEARNT[0], cursor=(SOURCE, "1"))
    (first,) = _incidents(records)
    with records.transaction() as conn:  # a reviewer rejected it meanwhile
        conn.execute("UPDATE incidents SET status = 'rejected' WHERE incident_id = $1", (first,))
    incidents.store_batch(LEARNT[1], cursor=(SOURCE, "2"))
    assert len(_incidents(records)) == 2 and len(records.events_of(first)) == 1


def test_ingests_batches_and_batches_of_no_source_hold_no_memory(tmp_path):
    # `ingest`'s final reads decide each batch as alone (the read-whole reference), and lines handed in with no
    # source (an evaluation's cases) are no continuation of one another
    records = Records(tmp_path / "ingest.sqlite3")
    incidents = Incidents(records)
    incidents.store_batches([(LEARNT[0], (SOURCE, "1"))])
    incidents.store_batches([(LEARNT[1], (SOURCE, "2"))])
    assert len(_incidents(records)) == 2
    records = Records(tmp_path / "none.sqlite3")
    incidents = Incidents(records)
    incidents.store_batch(LEARNT[0], cursor=None)
    incidents.store_batch(LEARNT[1], cursor=None)
    assert len(_incidents(records)) == 2


@BOTH_BACKENDS
def test_a_source_read_in_two_batches_joins_across_the_cut_on_both_stores(engine):
    # which remembered incidents are still open is read with the batch's first reads (pipelined on PostgreSQL)
    engine.incidents.store_batch(LEARNT[0], cursor=(SOURCE, "1"))
    engine.incidents.store_batch(PROCESS[0], cursor=(SOURCE, "2"))
    engine.incidents.store_batch([*LEARNT[1], *PROCESS[1]], cursor=(SOURCE, "3"))
    held = {row["incident_id"]: len(engine.records.events_of(row["incident_id"])) for row in engine.records.incidents()}
    assert sorted(held.values()) == [2, 2]


def test_a_line_without_a_time_read_first_by_a_later_read_takes_the_record_before_it_not_the_files_first(tmp_path):
    # read whole, a record without a time takes the previous record's; a live read that stops before it went on with
    # the file's first time (a JVM crash banner's lines, two seconds apart read whole, came eight seconds apart)
    log = tmp_path / "app.jsonl"
    log.write_text('{"time": "2026-12-01T10:00:00Z", "level": "INFO", "service": "search", "message": "started"}\n'
                   '{"time": "2026-12-01T10:00:09Z", "level": "ERROR", "service": "search", "message": "fatal error"}\n'
                   '{"level": "ERROR", "service": "search", "message": "error report saved as hs_err_pid7.log"}\n')
    tailer = Tailer(log, max_bytes=65536, final=True, batch_lines=2)
    first = tailer.read(None)
    assert [e.message for e in first.items] == ["started", "fatal error"]
    (late,) = tailer.read(first.cursor).items
    assert late.time == T0 + timedelta(seconds=9) and late.fields.get("time_inferred")
