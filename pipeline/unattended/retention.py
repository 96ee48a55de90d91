"""Retention: how long an incident's full history is kept, and what stays after.

Policy. An incident decided (fixed, not eligible, rejected, expired) more than
INCIDENTIQ_RETENTION_DAYS ago (default 30) is compacted, once:
- kept: its record (status, RCA, recommendation, decision and fix in the summary), its audit
  entries, its fix record, and two kinds of checkpoint on the branch it ended on: every pause at
  the approval gate (with the interrupt and the answer) and the last checkpoint (the end). The
  history still shows how it was decided; replay from the gate stays possible.
- removed: every other checkpoint (the steps between, other branches from replays and forks),
  the log window and similar docs inside the kept ones (the events stay in the records store,
  the docs with their scores in the record's summary), and the bodies of
  its events beyond the sample the state keeps (the first 10 and the latest 40); its event count
  stays. Events that belong to no incident (context for log windows) go once
  they are older than the same number of days, and so do notifications delivered that long ago
  and backtests started that long ago (their results with them; a backtest writes no checkpoint).
  The daily pattern counts (new / rare / frequent, the funnel) go once older than both that many
  days and the recurrence window (incidents/recurrence.py), so they grow with days, not forever.
Paused and open incidents are never touched. Asking for a removed checkpoint (history, replay,
fork) is refused as not found (exit 4) with the date of the compaction. Afterwards both files
give the freed pages back (incremental vacuum). `python -m pipeline prune` runs it; the poller
runs it once an hour.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import cast

from pipeline.engine import Engine
from pipeline.incidents import recurrence
from pipeline.state import CLOSED_STATUSES, EVIDENCE_HEAD, EVIDENCE_TAIL
from pipeline.store import backtests, checkpoints, outbox, retention
from pipeline.store.owners import process_owner



@dataclass
class PruneReport:
    incidents: list[str] = field(default_factory=list)
    checkpoints_removed: int = 0
    events_removed: int = 0
    context_events_removed: int = 0
    skipped: list[str] = field(default_factory=list)  # in use by a replay or fork right now
    backtests_removed: int = 0
    pattern_days_removed: int = 0

    def as_json(self) -> dict:
        return {"incidents_compacted": len(self.incidents), "checkpoints_removed": self.checkpoints_removed,
                "events_removed": self.events_removed, "context_events_removed": self.context_events_removed,
                "skipped": self.skipped, "backtests_removed": self.backtests_removed,
                "pattern_days_removed": self.pattern_days_removed}


def kept_checkpoints(rows: list[dict]) -> set[str]:
    """The end of the thread's current branch and every gate pause on that branch."""
    if not rows:
        return set()
    parent = {r["checkpoint_id"]: r["parent_checkpoint_id"] for r in rows}
    gates = {r["checkpoint_id"] for r in rows if r["raised"]}
    head = rows[-1]["checkpoint_id"]
    keep, node = {head}, head
    while node in parent:
        if node in gates:
            keep.add(node)
        node = parent[node]
    return keep


def prune(engine: Engine, *, days: float | None = None, limit: int | None = None,
          full_vacuum: bool = True) -> PruneReport:
    """Compact the incidents decided more than `days` ago (default: the setting); see the policy.
    Without `full_vacuum` (the poller) a file not yet in incremental-vacuum mode keeps its size."""
    days = engine.settings.retention_days if days is None else days
    # the graph's checkpointer is one of our stores (either backend), as the composition root compiles it
    records, saver = engine.records, cast(checkpoints.CheckpointStore, engine.graph.checkpointer)
    cutoff = records.clock.now() - timedelta(days=days)
    report = PruneReport()
    owner = process_owner()
    for incident_id in retention.decided_before(records, cutoff, limit=limit):
        # a replay or fork may be starting on it: compact only under the incident's claim
        if not records.claim(incident_id, owner, statuses=CLOSED_STATUSES):
            report.skipped.append(incident_id)
            continue
        try:
            keep = kept_checkpoints(checkpoints.checkpoint_rows(saver, incident_id))
            report.checkpoints_removed += checkpoints.prune_thread(saver, incident_id, keep=keep)
            # the log window's events stay in the records store, the similar docs in the record's summary
            for checkpoint_id in keep:
                checkpoints.compact_checkpoint(saver, incident_id, checkpoint_id,
                                               cleared={"log_window": [], "similar_docs": []})
            report.events_removed += retention.compact_events(records, incident_id, head=EVIDENCE_HEAD,
                                                              tail=EVIDENCE_TAIL)
            report.incidents.append(incident_id)
        finally:
            records.release(incident_id, owner)
    report.context_events_removed = retention.drop_context_events(records, cutoff)
    outbox.prune_delivered(records, cutoff)  # notifications delivered before the cutoff
    # backtests started before the cutoff, with their results (they never wrote a checkpoint)
    report.backtests_removed = backtests.prune_before(records, cutoff)
    # daily pattern counts older than the recurrence window and the retention both
    report.pattern_days_removed = retention.drop_pattern_days(
        records, min(cutoff.date().isoformat(), recurrence.window_start(records.clock.now())))
    if report.checkpoints_removed:
        checkpoints.shrink_file(saver, full=full_vacuum)
    if report.events_removed or report.context_events_removed:
        retention.shrink_file(records, full=full_vacuum)
    return report
