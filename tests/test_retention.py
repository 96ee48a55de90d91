"""Retention: decided incidents older than the retention keep their record, audit, fix, the gate
and the end; the rest goes, the files shrink, and history and replay say what is gone."""
from __future__ import annotations

import json

from pipeline.engine.graph import thread_config
from pipeline.unattended.retention import prune
from pipeline.review.service import ReviewService
from pipeline.store import checkpoints
from tests.support import BOTH_BACKENDS, checkpoint_count, cli, paused_ids, pending


def _decide_two(engine) -> tuple[str, str, list[str]]:
    service = ReviewService(engine)
    # the most confident one gets a fix proposal when approved
    approved, rejected, *paused = sorted(paused_ids(engine), key=lambda i: -engine.records.incident(i)["confidence"])
    service.approve(approved, reviewer="ann", expect_interrupt=pending(engine, approved))
    service.replay(rejected, checkpoint_id=_gate(engine, rejected), reviewer="bob")  # a second branch
    service.reject(rejected, reviewer="bob", reason="noise")
    return approved, rejected, paused


def _gate(engine, incident_id: str) -> str:
    rows = checkpoints.checkpoint_rows(engine.graph.checkpointer, incident_id)
    return [r["checkpoint_id"] for r in rows if r["raised"]][-1]


@BOTH_BACKENDS
def test_a_decided_incident_keeps_its_record_audit_fix_gate_and_end(paused_engine):
    engine = paused_engine
    approved, rejected, paused = _decide_two(engine)
    before = {i: engine.records.incident(i) for i in (approved, rejected)}
    audit_before = engine.records.audit()
    paused_counts = {i: checkpoint_count(engine, i) for i in paused}
    head = {i: engine.graph.get_state(thread_config(i)).config["configurable"]["checkpoint_id"] for i in before}

    assert prune(engine, days=30).incidents == []  # decided today: nothing is old enough
    report = prune(engine, days=0)

    assert sorted(report.incidents) == sorted([approved, rejected]) and report.checkpoints_removed > 0
    for incident_id, row in before.items():
        after = engine.records.incident(incident_id)
        assert {k: after[k] for k in ("status", "summary", "event_count", "category")} == \
               {k: row[k] for k in ("status", "summary", "event_count", "category")}
        rows = checkpoints.checkpoint_rows(engine.graph.checkpointer, incident_id)
        assert rows[-1]["checkpoint_id"] == head[incident_id]  # the end
        assert all(r["raised"] for r in rows[:-1]) and any(r["raised"] for r in rows)  # and only gates
        state = engine.graph.get_state(thread_config(incident_id)).values
        assert state["log_window"] == [] and state["similar_docs"] == []  # in the records, not twice
        assert state["rca"].category == row["category"] and state["decision"] is not None
    assert engine.records.audit() == audit_before
    assert before[approved]["status"] == "fix_proposed" and len(engine.records.fixes(approved)) == 1
    assert {i: checkpoint_count(engine, i) for i in paused} == paused_counts  # open incidents untouched
    assert prune(engine, days=0).incidents == []  # once


@BOTH_BACKENDS
def test_history_and_replay_after_pruning_say_what_is_gone(paused_engine, capsys):
    engine = paused_engine
    approved, rejected, _ = _decide_two(engine)
    gone = [r["checkpoint_id"] for r in checkpoints.checkpoint_rows(engine.graph.checkpointer, rejected)
            if not r["raised"]][0]
    prune(engine, days=0)

    code, out, _ = cli(capsys, "history", rejected, "--json")
    assert code == 0 and [e["source"] for e in json.loads(out)]  # the kept checkpoints, newest first
    code, _, err = cli(capsys, "replay", rejected, "--checkpoint", gone, "--reviewer", "ann")
    assert code == 4 and "retention compacted its history" in err
    tree = ReviewService(engine).tree(rejected)
    assert len(tree["nodes"]) == len(checkpoints.checkpoint_rows(engine.graph.checkpointer, rejected))
    # the kept gate still replays: the approval fires again
    doc = ReviewService(engine).replay(rejected, checkpoint_id=_gate(engine, rejected), reviewer="ann")
    assert doc["status"] == "awaiting_approval" and doc["pending"]


def test_pruning_shrinks_the_checkpoint_file(paused_engine):
    engine = paused_engine
    _decide_two(engine)
    path = engine.checkpoint_path
    saver = engine.graph.checkpointer
    checkpoints.shrink_file(saver)  # the same starting point: vacuumed, WAL folded in
    size_before = path.stat().st_size
    prune(engine, days=0)
    assert path.stat().st_size < size_before


@BOTH_BACKENDS
def test_daily_pattern_counts_go_only_past_the_recurrence_window(paused_engine):
    """new / rare / frequent counts the last 30 days: older daily counts are pruned, the window's kept."""
    from datetime import timedelta

    from pipeline.incidents import recurrence

    records = paused_engine.records
    today = records.clock.now().date()
    first_in_window = recurrence.window_start(records.clock.now())
    old = (today - timedelta(days=recurrence.WINDOW_DAYS + 5)).isoformat()
    with records.transaction() as conn:
        for day in (old, first_in_window):
            conn.execute("INSERT INTO pattern_days(pattern, day, n) VALUES ($1, $2, $3)", ("p-old-and-kept", day, 3))
    report = prune(paused_engine, days=0)  # a retention shorter than the window keeps the window's days
    days = [r["day"] for r in records.query("SELECT day FROM pattern_days WHERE pattern = $1", ("p-old-and-kept",))]
    assert report.pattern_days_removed >= 1 and days == [first_in_window]
