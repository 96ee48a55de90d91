"""The guard on decisions: one winner among threads and processes, stale views refused, and paused
incidents that survive SIGKILL with their fix recorded once."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pipeline.errors import Conflict
from pipeline.store.owners import process_owner
from pipeline.review.service import ReviewService
from pipeline.unattended.file_ingest import ingest_path
from tests.support import (BOTH_BACKENDS, FIXTURES, HANG_ONCE_THE_FIX_IS_RECORDED, RACER, ROOT, by_category, child_env, cli, cli_here, paused_ids,
                           pending, run_child)

# durability and concurrency hold on either store
pytestmark = BOTH_BACKENDS


# opens the data dir, takes the incident as an approver in flight would, and hangs until killed
HOLDER = r"""
import sys, time
import pipeline
from pipeline.composition import open_engine
from pipeline.store.owners import process_owner
from pipeline.unattended.file_ingest import ingest_path
engine = open_engine(sync_knowledge=False)
ingest_path(engine, sys.argv[1])
incident = next(r["incident_id"] for r in engine.records.incidents() if r["category"] == "db_pool_exhausted")
assert engine.records.claim(incident, process_owner(), statuses=("awaiting_approval",), set_status="analyzing")
print(incident, flush=True)
time.sleep(600)
"""

# approves, but hangs right after code_fix recorded its fix and before the checkpoint says so
MID_FIX = r"""
import sys, time
import pipeline
from pipeline import cli
from pipeline.store import records
""" + HANG_ONCE_THE_FIX_IS_RECORDED


def _python(data_dir: Path, script: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", script, *map(str, args)], cwd=ROOT, env=child_env(data_dir),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _kill(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL


def test_stale_interrupt_after_new_evidence_exits_3_and_the_new_one_works(paused_engine, tmp_path, capsys):
    inc = by_category(paused_engine, "db_pool_exhausted")
    seen = pending(paused_engine, inc)
    more = tmp_path / "more.jsonl"
    more.write_text(json.dumps({
        "_time": "2026-11-28T10:00:09Z", "service": "checkout-api", "host": "co-3", "level": "ERROR",
        "message": "HikariPool-1 - Connection is not available, request timed out after 30001ms.",
        "exception": "java.sql.SQLTransientConnectionException"}) + "\n")
    assert ingest_path(paused_engine, more).incidents_updated == {inc}
    current = pending(paused_engine, inc)
    assert current != seen  # the analysis re-ran with the new evidence

    code, out, err = cli(capsys, "approve", inc, "--reviewer", "ann", "--expect-interrupt", seen)
    assert code == 3 and out == "" and "no longer pending" in err
    row = paused_engine.records.incident(inc)
    assert (row["status"], row["pending_interrupt_id"], row["claim_owner"]) == ("awaiting_approval", current, None)
    assert paused_engine.records.fixes(inc) == [] and paused_engine.records.audit(inc) == []

    assert cli(capsys, "approve", inc, "--reviewer", "ann", "--expect-interrupt", current)[0] == 0
    assert paused_engine.records.incident(inc)["status"] == "fix_proposed"
    assert len(paused_engine.records.fixes(inc)) == 1


def test_an_incident_in_use_refuses_decisions_until_released(paused_engine, capsys):
    inc = by_category(paused_engine, "db_pool_exhausted")
    owner = process_owner()
    assert paused_engine.records.claim(inc, owner)
    code, _, err = cli(capsys, "approve", inc, "--reviewer", "ann")
    assert code == 3 and "acting on it" in err
    paused_engine.records.release(inc, owner)
    assert cli(capsys, "approve", inc, "--reviewer", "ann")[0] == 0


@pytest.mark.timeout(120)
def test_two_threads_approving_the_same_incident_one_wins(paused_engine):
    for inc in paused_ids(paused_engine):
        seen = pending(paused_engine, inc)
        start = threading.Barrier(2)
        results: list[str] = []

        def approve(reviewer: str) -> None:
            service = ReviewService(paused_engine)
            start.wait()
            try:
                service.approve(inc, reviewer=reviewer, expect_interrupt=seen)
                results.append("ok")
            except Conflict as exc:
                results.append(type(exc).__name__)

        threads = [threading.Thread(target=approve, args=(name,)) for name in ("ann", "bob")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert sorted(results)[-1] == "ok" and results.count("ok") == 1 and len(results) == 2, results
        assert len(paused_engine.records.audit(inc)) == 1
        status = paused_engine.records.incident(inc)["status"]
        assert status in ("fix_proposed", "approved")
        assert len(paused_engine.records.fixes(inc)) == (1 if status == "fix_proposed" else 0)


ROUNDS = 15


@pytest.mark.timeout(300)
def test_two_processes_approving_the_same_incident_at_once_one_wins_every_round(engine, data_dir, tmp_path):
    events = tmp_path / "pools.jsonl"
    # each incident two lines at different times: a lone line is capped below the code-fix threshold (earned.py)
    events.write_text("".join(json.dumps({
        "_time": f"2026-11-28T11:{i:02d}:{s:02d}Z", "service": f"billing-{i:02d}", "host": f"b-{i}", "level": "ERROR",
        "message": "HikariPool-1 - Connection is not available, request timed out after 30000ms.",
        "exception": "java.sql.SQLTransientConnectionException"}) + "\n" for i in range(ROUNDS) for s in (0, 20)))
    ingest_path(engine, events)
    incidents = paused_ids(engine)
    assert len(incidents) == ROUNDS
    racers = [_python(data_dir, RACER) for _ in range(2)]
    try:
        for racer in racers:
            assert racer.stdout.readline().strip() == "ready", racer.stderr.read()
        losers = []
        for n, inc in enumerate(incidents):
            start = tmp_path / f"start-{n}"
            expect = ["--expect-interrupt", pending(engine, inc)] if n % 2 == 0 else []  # with and without
            for racer, who in zip(racers, ("ann", "bob")):
                racer.stdin.write(json.dumps([str(start), ["approve", inc, "--reviewer", who, *expect]]) + "\n")
                racer.stdin.flush()
            time.sleep(0.05)  # both are spinning on the start file now
            start.touch()
            results = [json.loads(racer.stdout.readline()) for racer in racers]
            codes = [code for code, _ in results]
            assert sorted(codes) == [0, 3], results
            loser_err = results[codes.index(3)][1]
            assert loser_err.count("\n") == 1 and loser_err.startswith("error: ")
            losers.append(loser_err)
            assert len(engine.records.audit(inc)) == 1
            assert len(engine.records.fixes(inc)) == 1
            assert engine.records.incident(inc)["status"] == "fix_proposed"
    finally:
        for racer in racers:
            racer.stdin.close()
            racer.wait(timeout=30)
    busy = sum("acting on it" in e or "analyzing" in e for e in losers)
    print(f"\n{ROUNDS} rounds: the loser arrived while the winner held the incident in {busy}, after it in {ROUNDS - busy}")


@pytest.mark.timeout(180)
def test_paused_incident_survives_sigkill_of_its_holder_and_is_approved_from_a_new_process(engine, data_dir):
    holder = _python(data_dir, HOLDER, FIXTURES / "small.jsonl")
    inc = holder.stdout.readline().strip()
    assert inc.startswith("INC-"), holder.stderr.read()
    _kill(holder)
    row = engine.records.incident(inc)
    assert row["status"] == "analyzing" and row["claim_owner"]  # what the killed process left behind

    done = run_child(data_dir, "approve", inc, "--reviewer", "bob", "--expect-interrupt", row["pending_interrupt_id"])
    assert done.returncode == 0, done.stderr
    assert engine.records.incident(inc)["status"] == "fix_proposed"
    assert len(engine.records.fixes(inc)) == 1
    again = cli_here(data_dir, "approve", inc, "--reviewer", "cy")  # a second approval, refused
    assert again.returncode == 3
    assert len(engine.records.fixes(inc)) == 1
    assert [(a["action"], a["reviewer"]) for a in engine.records.audit(inc)] == [("approve", "bob")]


@pytest.mark.timeout(180)
def test_process_killed_inside_code_fix_leaves_one_fix_and_an_audited_decision(paused_engine, data_dir):
    inc = by_category(paused_engine, "db_pool_exhausted")
    approver = _python(data_dir, MID_FIX, "approve", inc, "--reviewer", "ann")
    assert approver.stdout.readline().strip() == "fix recorded", approver.stderr.read()
    _kill(approver)
    assert paused_engine.records.incident(inc)["status"] == "analyzing"
    assert len(paused_engine.records.fixes(inc)) == 1

    # the late approval from this process (the killed approver is the real process under test)
    late = cli_here(data_dir, "approve", inc, "--reviewer", "bob")
    assert late.returncode == 3, late.stderr  # ann's approval stands; the run it started was finished
    row = paused_engine.records.incident(inc)
    assert row["status"] == "fix_proposed" and row["claim_owner"] is None
    fixes = paused_engine.records.fixes(inc)
    assert len(fixes) == 1 and fixes[0]["attempt"] == 1
    (entry,) = paused_engine.records.audit(inc)
    assert (entry["action"], entry["reviewer"]) == ("approve", "ann") and "died" in entry["note"]
    assert entry["after"]["status"] == "fix_proposed"
