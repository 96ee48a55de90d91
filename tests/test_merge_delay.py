"""A noisy incident awaiting approval re-runs its analysis at most once per merge delay."""
from __future__ import annotations

import json

from pipeline.clock import ManualClock
from pipeline.unattended.poller import Poller
from pipeline.sources.file import FileSource
from tests.support import BOTH_BACKENDS, by_category, pending

HIKARI = {"service": "checkout-api", "host": "co-1", "level": "ERROR",
          "exception": "java.sql.SQLTransientConnectionException",
          "message": "HikariPool-1 - Connection is not available, request timed out after 30999ms."}


@BOTH_BACKENDS
def test_new_evidence_waits_for_the_merge_delay_then_re_runs_the_analysis(paused_engine, tmp_path):
    engine = paused_engine
    engine.settings = engine.settings.model_copy(update={"merge_delay": 60.0})
    clock = engine.records.clock = ManualClock()
    incident_id = by_category(engine, "db_pool_exhausted")
    seen_by_reviewer = pending(engine, incident_id)
    log = tmp_path / "live.jsonl"
    log.write_text(json.dumps({**HIKARI, "_time": "2026-11-28T10:08:00Z"}) + "\n")
    poller = Poller(engine, FileSource(log, max_bytes=engine.settings.max_event_bytes), interval=0.05)
    try:
        poller.poll_once()
        row = engine.records.incident(incident_id)
        # counted at once, but the reviewer's analysis stands while evidence gathers
        assert row["event_count"] == 4 and row["pending_interrupt_id"] == seen_by_reviewer
        clock.advance(seconds=59)
        poller.poll_once()
        assert engine.records.incident(incident_id)["pending_interrupt_id"] == seen_by_reviewer
        clock.advance(seconds=2)
        poller.poll_once()
    finally:
        poller.close()
    row = engine.records.incident(incident_id)
    assert row["status"] == "awaiting_approval" and row["pending_interrupt_id"] != seen_by_reviewer
    assert not engine.records.has_unmerged(incident_id)
