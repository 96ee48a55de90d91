"""A reviewer's decision is durable before the run acts on it. Under load
LangGraph's default (async) checkpointing let code_fix record a fix while the approval's
checkpoint was still being written; a kill then lost the approval (a second reviewer approved
again and the first, whose fix stood, was never audited). Slow checkpoint writes stand in for the
loaded machine here, so the race is hit every time, not now and then."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from tests.support import BOTH_BACKENDS, HANG_ONCE_THE_FIX_IS_RECORDED, ROOT, by_category, child_env, cli_here

# durability and concurrency hold on either store
pytestmark = BOTH_BACKENDS

SLOW_WRITES_THEN_HANG_IN_FIX = r"""
import sys, time
import pipeline
from pipeline import cli
from pipeline.store import checkpoints, records

def slow(method):
    def wrapper(self, *args, **kwargs):
        time.sleep(1.0)  # a loaded machine: the checkpoint write lags behind the next step
        return method(self, *args, **kwargs)
    return wrapper

checkpoints.CheckpointStore.put = slow(checkpoints.CheckpointStore.put)
checkpoints.CheckpointStore.put_writes = slow(checkpoints.CheckpointStore.put_writes)
""" + HANG_ONCE_THE_FIX_IS_RECORDED


@pytest.mark.timeout(180)
def test_an_approval_killed_after_its_fix_was_recorded_stands_and_is_audited(paused_engine, data_dir):
    inc = by_category(paused_engine, "db_pool_exhausted")
    approver = subprocess.Popen([sys.executable, "-c", SLOW_WRITES_THEN_HANG_IN_FIX, "approve", inc, "--reviewer", "ann"],
                                cwd=ROOT, env=child_env(data_dir), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
    assert approver.stdout.readline().strip() == "fix recorded", approver.stderr.read()
    os.kill(approver.pid, signal.SIGKILL)
    approver.wait(timeout=30)

    # the late approval from this process (the killed approver is the real process under test)
    late = cli_here(data_dir, "approve", inc, "--reviewer", "bob")
    assert late.returncode == 3, late.stderr  # ann's approval stands
    assert paused_engine.records.incident(inc)["status"] == "fix_proposed"
    assert len(paused_engine.records.fixes(inc)) == 1
    (entry,) = paused_engine.records.audit(inc)
    assert (entry["action"], entry["reviewer"]) == ("approve", "ann")
