"""A merge of new evidence into a paused run does its reads and writes once (issue 37): the paused
state's stored values are decoded once although the runner, LangGraph's update_state and its
invoke each read the newest checkpoint, and each merged event is marked merged once, with the
record written after the run (a burst's merges were a third of the poller's time)."""
from __future__ import annotations

import json

from pipeline.engine import runner
from pipeline.ingest.events import normalize
from bench.pipeline import merge_work_counted  # the benchmark's own counting (bench/pipeline.py --merges)
from tests.support import by_category, pending

POOL = {"service": "checkout-api", "host": "co-1", "level": "ERROR",
        "exception": "java.sql.SQLTransientConnectionException"}


def _new_evidence(engine, count: int) -> None:
    """Store `count` more pool errors (conftest.py's INCIDENTIQ_REANALYSE_GROWTH=1: they re-run the analysis)."""
    lines = [json.dumps({**POOL, "_time": f"2026-11-28T10:09:{n:02d}Z",
                         "message": f"HikariPool-1 - Connection is not available, request timed out after {30010 + n}ms."})
             for n in range(count)]
    engine.incidents.store_batch([normalize(json.loads(line), source="test", position=str(n))
                                  for n, line in enumerate(lines)], cursor=None)


def test_a_merge_decodes_the_paused_state_once_and_marks_each_event_once(paused_engine):
    engine = paused_engine
    incident = by_category(engine, "db_pool_exhausted")
    before = pending(engine, incident)
    _new_evidence(engine, 5)
    unmerged = [e.event_id for e in engine.records.events_of(incident, only_unmerged=True)]
    assert len(unmerged) == 5

    with merge_work_counted(engine) as (fetch_calls, marked):
        assert runner.advance_run(engine, incident) == "merged"

    row = engine.records.incident(incident)
    assert row["status"] == "awaiting_approval" and row["pending_interrupt_id"] != before
    assert not engine.records.has_unmerged(incident)
    # the paused state's values (evidence, log window, docs, analysis) were read back: each once
    assert fetch_calls and max(fetch_calls.values()) == 1, fetch_calls.most_common(3)
    assert sorted(marked) == sorted(unmerged) and set(marked.values()) == {1}
