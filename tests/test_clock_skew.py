"""A decider whose clock is behind the process that paused the run still completes its decision.

The thread's newest checkpoint is the one with the greatest id, and LangGraph makes ids from the
machine's clock: a deciding process 120 s behind the poller that wrote the gate used to write its
decision's checkpoints *before* the gate's, so its approval exited 0 while the incident stayed
`analyzing` (others refused) until the next poll ran the decision again."""
from __future__ import annotations

import time
from contextlib import contextmanager
from datetime import timedelta

import langgraph.checkpoint.base.id as checkpoint_ids
import pytest

from pipeline.clock import ManualClock
from pipeline.composition import open_engine
from pipeline.engine.graph import thread_config
from pipeline.unattended.file_ingest import ingest_path
from pipeline.services import ReviewService
from pipeline.store import checkpoints
from tests.support import BOTH_BACKENDS, FIXTURES, make_settings

SKEW = 120.0
_UUID_EPOCH = 0x01B21DD213814000  # 1582-10-15 in uuid's 100 ns ticks


@contextmanager
def checkpoint_clock_ahead(seconds: float):
    """Checkpoints written inside are stamped as by a process whose clock is `seconds` ahead;
    after it, ids come from this machine's clock again (a fresh process's)."""
    checkpoint_ids._last_v6_timestamp = time.time_ns() // 100 + _UUID_EPOCH + int(seconds * 10**7)
    try:
        yield
    finally:
        checkpoint_ids._last_v6_timestamp = None


@pytest.fixture(autouse=True)
def _id_clock_restored():
    """This process's checkpoint-id clock is this machine's again after each test: the decider
    moves it past the gate's id (120 s ahead), and left there every later test in the worker
    would mint ids up to 120 s in the future (the checkpoint tree, which reads a checkpoint's
    time from its id, then disagreed with the history by that much)."""
    yield
    checkpoint_ids._last_v6_timestamp = None


@BOTH_BACKENDS
def test_an_approval_from_a_clock_120s_behind_ends_the_run_and_the_status(engine, data_dir):
    with checkpoint_clock_ahead(SKEW):  # the poller that paused the run
        ingest_path(engine, FIXTURES / "small.jsonl")
    incident_id = engine.records.incidents(status="awaiting_approval")[0]["incident_id"]
    gate = checkpoints.latest_checkpoint_id(engine.graph.checkpointer, incident_id)

    behind = ManualClock(engine.records.clock.now() - timedelta(seconds=SKEW))
    decider = open_engine(make_settings(data_dir), clock=behind, sync_knowledge=False)
    try:
        doc = ReviewService(decider).approve(incident_id, reviewer="ann")
    finally:
        decider.records.close()

    assert doc["status"] in ("fix_proposed", "approved"), doc["status"]
    assert engine.records.incident(incident_id)["status"] == doc["status"]
    head = engine.graph.get_state(thread_config(incident_id))
    assert head.next == () and head.values["decision"].reviewer == "ann"
    assert checkpoints.latest_checkpoint_id(engine.graph.checkpointer, incident_id) > gate
    # nothing is left for a poll to repair, and the fix was recorded once
    assert incident_id not in engine.records.incidents_needing_work()
    assert len(engine.records.fixes(incident_id)) == (1 if doc["status"] == "fix_proposed" else 0)
