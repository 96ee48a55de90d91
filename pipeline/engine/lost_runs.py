"""Runs whose checkpoints are gone (checkpoints.sqlite was deleted or moved aside as damaged).

The records store keeps every event, so an undecided incident is simply analysed again from them
(the runner's "no checkpoint yet" path) and reaches the inbox with a fresh interrupt. A decided
one (its last reviewer action was approve or reject) is never re-opened: it keeps its record,
and `last_error` says why its history and replay are gone. Checked once per process and file,
the first time the runner or the poller works (see `recover_lost_runs`).
"""
from __future__ import annotations

from typing import Any, cast

from pipeline.engine import Engine
from pipeline.state import CLOSED_STATUSES
from pipeline.store import checkpoints
from pipeline.store.owners import process_owner

LOST_UNDECIDED = "its checkpoints were lost (checkpoints.sqlite was replaced): analysed again from its stored events"
LOST_DECIDED = ("its checkpoints were lost (checkpoints.sqlite was replaced): the decision and its record are kept;"
                " its history, replay and fork are not available")
NEVER = "9999-12-31T00:00:00+00:00"  # runner.NEVER (the runner imports this module)
# reviewer actions that decide a run, and those that open it again
DECIDING, REOPENING = ("approve", "reject", "expire"), ("revise", "replay", "fork")


def recover_lost_runs(engine: Engine) -> list[str]:
    """Put incidents whose thread has no checkpoint back in step; returns their ids."""
    saver = engine.graph.checkpointer
    if getattr(saver, "lost_runs_checked", True):  # only our checkpoint stores (either backend), once each
        return []
    # the records first: a record says 'paused' only after its checkpoint was committed, so a
    # run another process is writing right now is never taken for lost
    rows = [r for r in engine.records.incidents() if _had_a_run(r)]
    store = cast(checkpoints.CheckpointStore, saver)  # only our stores have lost_runs_checked
    present = checkpoints.threads_with_checkpoints(store, [r["incident_id"] for r in rows])
    lost = [r for r in rows if r["incident_id"] not in present]
    for row in lost:
        _recover(engine, row)
    store.lost_runs_checked = True
    return [r["incident_id"] for r in lost]


def _had_a_run(row: dict[str, Any]) -> bool:
    # a new incident is 'analyzing' with no summary and no checkpoint yet: nothing was lost
    if row["status"] == "failed":
        return False  # retried from its stored events anyway, checkpoint or not
    return row["status"] != "analyzing" or bool(row["summary"])


def _recover(engine: Engine, row: dict[str, Any]) -> None:
    incident_id, records = row["incident_id"], engine.records
    owner = process_owner()
    if not records.claim(incident_id, owner, statuses=(row["status"],)):
        return  # someone acts on it right now; the next process to start looks again
    try:
        if _decided(engine, incident_id):
            if row["status"] in CLOSED_STATUSES:
                records.update_incident(incident_id, last_error=LOST_DECIDED, pending_interrupt_id=None,
                                        pending_checkpoint_id=None)
            else:
                # approved, and its code fix did not finish: re-running would ask for the decision again
                records.update_incident(incident_id, status="failed", next_attempt_at=NEVER,
                                        last_error=LOST_DECIDED, pending_interrupt_id=None,
                                        pending_checkpoint_id=None)
        elif row["status"] not in CLOSED_STATUSES:
            records.update_incident(incident_id, status="analyzing", pending_interrupt_id=None,
                                    pending_checkpoint_id=None, last_error=LOST_UNDECIDED)
        else:
            records.update_incident(incident_id, last_error=LOST_DECIDED)  # closed without a reviewer (expired)
    finally:
        records.release(incident_id, owner)


def _decided(engine: Engine, incident_id: str) -> bool:
    actions = [a["action"] for a in engine.records.audit(incident_id) if a["action"] in DECIDING + REOPENING]
    return bool(actions) and actions[-1] in DECIDING
