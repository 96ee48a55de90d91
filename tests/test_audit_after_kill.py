"""A reviewer's process killed (SIGKILL) right after it wrote a change with
update_state, before auditing it: the change is audited when the run is taken over."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from pipeline.engine.runner import run_pending
from pipeline.review.service import ReviewService
from tests.support import BOTH_BACKENDS, ROOT, paused_ids

# durability and concurrency hold on either store
pytestmark = BOTH_BACKENDS

# Runs one action in a real process that SIGKILLs itself the moment update_state returns.
KILLED_AFTER_UPDATE = textwrap.dedent("""
    import json, os, signal, sys
    sys.path.insert(0, {root!r})
    import pipeline
    from pipeline.composition import open_engine
    from pipeline.review.service import ReviewService
    from pipeline.config import Settings
    from pathlib import Path

    engine = open_engine(Settings.from_env(data_dir=Path({data!r})), sync_knowledge=False)
    real = engine.graph.update_state

    def update_then_die(*args, **kwargs):
        real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)

    engine.graph.update_state = update_then_die
    review = ReviewService(engine)
    action, kwargs = json.loads(sys.argv[1])
    getattr(review, action)({incident!r}, **kwargs)
""")

ROOT_CAUSE = "the cart's customer is null after a session timeout (edited)"


def run_killed(engine, incident_id: str, action: str, **kwargs) -> int:
    script = KILLED_AFTER_UPDATE.format(root=str(ROOT), data=str(engine.settings.data_dir), incident=incident_id)
    done = subprocess.run([sys.executable, "-c", script, json.dumps([action, kwargs])], cwd=ROOT,
                          capture_output=True, text=True, timeout=180)
    return done.returncode


@pytest.mark.parametrize("action", ["edit", "approve", "fork"])
def test_a_change_whose_process_died_before_auditing_it_is_audited(paused_engine, action):
    review = ReviewService(paused_engine)
    incident = next(r["incident_id"] for r in paused_engine.records.incidents() if r["service"] == "checkout-api")
    edits = {"rca.root_cause": ROOT_CAUSE}
    if action == "fork":
        checkpoint = next(h for h in review.history(incident, limit=100) if h["writes_by"] == ["rca"])["checkpoint_id"]
        kwargs = {"checkpoint_id": checkpoint, "reviewer": "ann", "edits": edits}
    else:
        kwargs = {"reviewer": "ann", "edits": edits}
    assert run_killed(paused_engine, incident, action, **kwargs) == -9
    assert paused_engine.records.audit(incident) == []  # died before its audit entry
    run_pending(paused_engine)  # the poller's pass: takes the dead claim over and continues the run
    row = paused_engine.records.incident(incident)
    assert row["status"] == "awaiting_approval"
    assert review.incident(incident)["rca"]["root_cause"] == ROOT_CAUSE
    (entry,) = paused_engine.records.audit(incident)
    assert entry["reviewer"] == "ann" and entry["action"] == ("fork" if action == "fork" else "edit")
    assert entry["after"]["rca.root_cause"] == ROOT_CAUSE and entry["before"]["rca.root_cause"] != ROOT_CAUSE
    run_pending(paused_engine)
    assert len(paused_engine.records.audit(incident)) == 1  # audited once


def test_a_change_that_completed_is_audited_once(paused_engine):
    review = ReviewService(paused_engine)
    incident = paused_ids(paused_engine)[0]
    review.edit(incident, reviewer="ann", edits={"rca.root_cause": ROOT_CAUSE})
    (entry,) = paused_engine.records.audit(incident)
    assert entry["after"]["change_id"]
    paused_engine.records.update_incident(incident, status="analyzing")
    assert paused_engine.records.claim(incident, "gone-host:1:0:dead")  # a claim a dead actor left
    with paused_engine.records.transaction() as conn:  # as if its process had died holding it
        conn.execute("UPDATE incidents SET claim_owner = $1 WHERE incident_id = $2",
                     (f"{__import__('socket').gethostname()}:999999:0:dead", incident))
    run_pending(paused_engine)
    assert paused_engine.records.incident(incident)["status"] == "awaiting_approval"
    assert len(paused_engine.records.audit(incident)) == 1
