"""`ingest` (a final read) stores several batches in one transaction (issue 37.3): fewer commits,
and each batch still decided as it was alone, so what is stored does not change with the grouping.
A failure inside a group stores none of it and leaves the cursor where the last group left it: the
next ingest stores every line once."""
from __future__ import annotations

import json
import math

import pytest

from pipeline.store import incident_rows
from pipeline.unattended.file_ingest import ingest_file
from tests.support import BOTH_BACKENDS

HOST = "shop-1"
WATCHDOG = "i.l.core.protocol.ConnectionWatchdog"
BATCH = 10


def _line(second: int, message: str, level: str = "INFO", service: str = WATCHDOG) -> str:
    return json.dumps({"_time": f"2026-11-28T10:{second // 60:02d}:{second % 60:02d}Z", "service": service,
                       "host": HOST, "level": level, "message": message}) + "\n"


def _log(path, batches: int = 8) -> None:
    """`batches` batches of BATCH lines; the last line of the fourth batch is an error its writer says
    came back from in the first line of the fifth: read alone, each batch sees only one of them."""
    lines = []
    for n in range(batches * BATCH):
        if n == 4 * BATCH - 1:
            lines.append(_line(n, "Cannot reconnect to [redis-cache:6379]: Connection refused: redis-cache/10.0.7.4:6379",
                               level="ERROR"))
        elif n == 4 * BATCH:
            lines.append(_line(n, "Reconnected to redis-cache/<unresolved>:6379"))
        elif n % 7 == 3:
            lines.append(_line(n, f"payment {n} declined: card expired", level="ERROR", service="payments"))
        else:
            lines.append(_line(n, f"request {n} served", service="web"))
    path.write_text("".join(lines))


def _stored(engine) -> dict:
    records = engine.records
    return {
        "events": sorted((e.event_id, e.message, e.position) for e in records.all_events()),
        "joined": sorted(tuple(r) for r in records.query(
            "SELECT event_id, incident_id FROM events WHERE incident_id IS NOT NULL")),
        "incidents": sorted(tuple(r) for r in records.query(
            "SELECT incident_id, fingerprint, service, first_seen, last_seen, event_count FROM incidents")),
    }


def _commits(engine, monkeypatch) -> list[int]:
    """How many commits storing batches made (the layout a file's reader learns is written apart)."""
    done = [0]
    conn, incidents = engine.records.conn, engine.incidents
    commit, store_batches = conn.commit, incidents.store_batches
    storing = [False]

    def counted():
        done[0] += storing[0]
        return commit()

    def store(*args, **kwargs):
        storing[0] = True
        try:
            return store_batches(*args, **kwargs)
        finally:
            storing[0] = False

    monkeypatch.setattr(conn, "commit", counted)
    monkeypatch.setattr(incidents, "store_batches", store)
    return done


@BOTH_BACKENDS
@pytest.mark.parametrize("group", [1, 3, 8])
def test_a_final_read_commits_a_group_of_batches_at_a_time_each_decided_alone(engine, tmp_path, monkeypatch, group):
    log = tmp_path / "app.jsonl"
    _log(log)
    done = _commits(engine, monkeypatch)
    counts = ingest_file(engine, log, batch_lines=BATCH, group=group)
    stored_batches = done[0]
    assert counts.events == 8 * BATCH
    assert stored_batches == math.ceil(9 / group)  # 8 full reads and the one that finds the end
    got = _stored(engine)
    services = sorted(r[2] for r in got["incidents"])
    # the watchdog's error and its recovery were in two batches: read alone, it heals nothing, grouped or not
    assert services == ["i.l.core.protocol.ConnectionWatchdog", "payments"]


def test_grouped_and_ungrouped_ingest_store_the_same(tmp_path, monkeypatch):
    from pipeline.composition import open_engine
    from pipeline.store import checkpoints
    from tests.support import make_settings

    log = tmp_path / "app.jsonl"
    _log(log)
    got = []
    for group in (1, 8):
        engine = open_engine(make_settings(tmp_path / f"data-{group}"), sync_knowledge=False)
        try:
            ingest_file(engine, log, batch_lines=BATCH, group=group)
            got.append(_stored(engine))
        finally:
            engine.records.close()
            checkpoints.close_all()
    assert got[0] == got[1]
    assert len(got[0]["events"]) == 8 * BATCH


@BOTH_BACKENDS
def test_a_failure_in_a_group_stores_none_of_it_and_the_next_ingest_stores_every_line_once(engine, tmp_path,
                                                                                           monkeypatch):
    log = tmp_path / "app.jsonl"
    _log(log)
    calls = [0]
    insert = incident_rows.insert_events

    def failing(conn, events, *, stamp):
        calls[0] += 1
        if calls[0] == 12:  # two calls a batch: the sixth batch, inside the second group of four
            raise RuntimeError("disk full")
        return insert(conn, events, stamp=stamp)

    monkeypatch.setattr(incident_rows, "insert_events", failing)
    with pytest.raises(RuntimeError):
        ingest_file(engine, log, batch_lines=BATCH, group=4)
    assert engine.records.query("SELECT count(*) AS n FROM context_ids")[0]["n"] + engine.records.query(
        "SELECT count(*) AS n FROM events")[0]["n"] == 4 * BATCH  # the first group's lines only
    monkeypatch.setattr(incident_rows, "insert_events", insert)
    counts = ingest_file(engine, log, batch_lines=BATCH, group=4)
    assert counts.events == 4 * BATCH
    stored = _stored(engine)
    assert len(stored["events"]) == len({e[0] for e in stored["events"]}) == 8 * BATCH
    # the miner learnt the failed group's templates again, from the store as committed
    assert sorted(r[2] for r in stored["incidents"]) == ["i.l.core.protocol.ConnectionWatchdog", "payments"]
