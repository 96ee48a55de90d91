"""The reviewer controls grouping (issue 35.4): merge one paused incident into another and split a
member pattern back out, from the CLI, each audited with who, when and why, the analysis redone on
the evidence that results and the pending interrupt replaced; a split or merge racing a decision on
the same incident has exactly one winner, on either store."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from datetime import datetime, timedelta, timezone

import pytest

from pipeline.clock import iso
from pipeline.engine.runner import run_pending
from pipeline.errors import Conflict
from pipeline.review.service import ReviewService
from pipeline.unattended.file_ingest import ingest_path
from tests.support import BOTH_BACKENDS, ROOT, child_env, cli, pending, state_of, write_jsonl

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)


def _two_incidents(engine, tmp_path) -> tuple[str, str]:
    """A refusal in orders-api and the timeouts gateway sees: two paused incidents, since the timeouts
    name nothing the refusal names (outage correlation keeps them apart; the reviewer knows better)."""
    lines = [{"_time": iso(T0 + timedelta(seconds=i)), "service": "orders-api", "level": "ERROR",
              "message": "Connection refused: connect to inventory-db:5432 failed"} for i in range(3)]
    lines += [{"_time": iso(T0 + timedelta(seconds=10 + i)), "service": "gateway", "level": "ERROR",
               "message": f"upstream request timed out after {3000 + i}ms"} for i in range(4)]
    ingest_path(engine, write_jsonl(tmp_path / "outage.jsonl", lines))
    rows = {r["service"]: r for r in engine.records.incidents()}
    assert {r["status"] for r in rows.values()} == {"awaiting_approval"}
    return rows["orders-api"]["incident_id"], rows["gateway"]["incident_id"]


def _services_analysed(engine, incident_id: str) -> set[str]:
    return {e.service for e in state_of(engine, incident_id).evidence}


@BOTH_BACKENDS
def test_a_merge_then_a_split_regroup_the_evidence_and_analyse_it_again(engine, tmp_path, capsys):
    refusal, timeouts = _two_incidents(engine, tmp_path)
    before = pending(engine, refusal)
    code, out, err = cli(capsys, "merge", timeouts, "--into", refusal, "--reason", "the timeouts are the refusal's",
                         "--as", "ann", "--json")
    assert code == 0, err
    merged = json.loads(out)
    kept = merged["incident"]
    assert kept["status"] == "awaiting_approval" and kept["pending"]["interrupt_id"] != before
    assert kept["event_count"] == 7 and _services_analysed(engine, refusal) == {"orders-api", "gateway"}
    row = engine.records.incident(refusal)
    assert (row["pattern_count"], row["service_count"]) == (2, 2)
    assert merged["merged"]["status"] == "merged"
    assert merged["merged"]["link"]["text"] == f"merged into {refusal}"
    assert kept["linked_from"] == [{"incident_id": timeouts, "kind": "merged", "status": "merged",
                                    "text": f"{timeouts} was merged into it"}]
    for inc in (refusal, timeouts):
        (entry,) = [a for a in engine.records.audit(inc) if a["action"] == "merge"]
        assert (entry["reviewer"], entry["note"]) == ("ann", "the timeouts are the refusal's") and entry["at"]
    code, _, err = cli(capsys, "reject", timeouts, "--reason", "too late", "--as", "bob")
    assert code == 3, err  # a merged incident takes no decision

    code, out, _ = cli(capsys, "patterns", refusal, "--json")
    patterns = json.loads(out)
    (extra,) = [p for p in patterns if not p["opening"]]
    assert extra["events"] == 4 and "timed out" in extra["example"]
    again = pending(engine, refusal)
    code, out, err = cli(capsys, "split", refusal, "--pattern", extra["pattern"], "--reason", "two causes after all",
                         "--as", "bob", "--expect-interrupt", again, "--json")
    assert code == 0, err
    split = json.loads(out)
    assert split["incident"]["event_count"] == 3 and split["incident"]["pending"]["interrupt_id"] != again
    assert _services_analysed(engine, refusal) == {"orders-api"}
    new = split["split"]
    assert new["status"] == "awaiting_approval" and new["event_count"] == 4 and new["service"] == "gateway"
    assert new["link"]["text"] == f"split out of {refusal}"
    assert _services_analysed(engine, new["incident_id"]) == {"gateway"}
    for inc in (refusal, new["incident_id"]):
        (entry,) = [a for a in engine.records.audit(inc) if a["action"] == "split"]
        assert (entry["reviewer"], entry["note"]) == ("bob", "two causes after all")
    code, out, _ = cli(capsys, "show", refusal)
    assert f"{new['incident_id']} was split out of it" in out


def test_a_split_or_merge_needs_a_reason_and_a_member_pattern(engine, tmp_path, capsys):
    refusal, timeouts = _two_incidents(engine, tmp_path)
    seen = pending(engine, timeouts)
    code, _, err = cli(capsys, "merge", timeouts, "--into", refusal, "--reason", "  ")
    assert code == 2 and "reason" in err
    code, _, err = cli(capsys, "split", refusal, "--pattern", "no-such-pattern", "--reason", "why not")
    assert code == 2 and "no member pattern" in err
    opening = engine.records.incident(refusal)["fingerprint"]
    code, _, err = cli(capsys, "split", refusal, "--pattern", opening, "--reason", "why not")
    assert code == 2 and "opened with" in err
    assert pending(engine, timeouts) == seen and engine.records.incident(refusal)["event_count"] == 3


def _race(engine, incident_id: str, regroup) -> list[str]:
    """A rejection and `regroup` on the same paused incident, from two threads at once."""
    seen = pending(engine, incident_id)
    start, results = threading.Barrier(2), []

    def run(action) -> None:
        start.wait()
        try:
            action()
            results.append("won")
        except Conflict as exc:
            results.append(type(exc).__name__)

    def reject() -> None:
        ReviewService(engine).reject(incident_id, reviewer="carol", reason="not an outage", expect_interrupt=seen)

    threads = [threading.Thread(target=run, args=(a,)) for a in (reject, lambda: regroup(seen))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return results


@BOTH_BACKENDS
@pytest.mark.timeout(300)
def test_a_merge_racing_a_rejection_of_the_same_incident_has_one_winner(engine, tmp_path):
    refusal, timeouts = _two_incidents(engine, tmp_path)

    def merge(seen: str) -> None:
        ReviewService(engine).merge(timeouts, into=refusal, reason="one outage", reviewer="ann", expect_interrupt=seen)

    results = _race(engine, timeouts, merge)
    assert results.count("won") == 1 and len(results) == 2, results
    status = engine.records.incident(timeouts)["status"]
    decided = [a["action"] for a in engine.records.audit(timeouts) if a["action"] in ("merge", "reject")]
    assert decided == (["merge"] if status == "merged" else ["reject"]) and status in ("merged", "rejected")
    assert engine.records.incident(refusal)["event_count"] == (7 if status == "merged" else 3)


@BOTH_BACKENDS
@pytest.mark.timeout(300)
def test_a_split_racing_a_rejection_of_the_same_incident_has_one_winner(engine, tmp_path):
    refusal, timeouts = _two_incidents(engine, tmp_path)
    service = ReviewService(engine)
    service.merge(timeouts, into=refusal, reason="one outage", reviewer="ann")
    (extra,) = [p["pattern"] for p in service.patterns(refusal) if not p["opening"]]

    def split(seen: str) -> None:
        ReviewService(engine).split(refusal, pattern=extra, reason="two causes", reviewer="ann", expect_interrupt=seen)

    results = _race(engine, refusal, split)
    assert results.count("won") == 1 and len(results) == 2, results
    row = engine.records.incident(refusal)
    decided = [a["action"] for a in engine.records.audit(refusal) if a["action"] in ("split", "reject")]
    if row["status"] == "rejected":
        assert decided == ["reject"] and row["event_count"] == 7 and len(engine.records.incidents()) == 2
    else:
        assert decided == ["split"] and row["event_count"] == 3 and len(engine.records.incidents()) == 3


# merges (or splits) in a process of its own and hangs once the records moved, before the graph follows
KILLED_MIDWAY = r"""
import sys, time
import pipeline
from pipeline.composition import open_engine
from pipeline.review import grouping
from pipeline.review.service import ReviewService

def hang(self, *args, **kwargs):
    print("moved", flush=True)
    time.sleep(600)

engine = open_engine(sync_knowledge=False)
review = ReviewService(engine)
if sys.argv[1] == "merge":
    grouping.Grouping._close_merged = hang
    review.merge(sys.argv[2], into=sys.argv[3], reason="one outage", reviewer="ann")
else:
    grouping.Grouping._reanalyse = hang
    review.split(sys.argv[2], pattern=sys.argv[3], reason="two causes", reviewer="ann")
"""


def _killed_midway(data_dir, *args: str) -> None:
    proc = subprocess.Popen([sys.executable, "-c", KILLED_MIDWAY, *args], cwd=ROOT, env=child_env(data_dir),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "moved", proc.stderr.read()
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


@BOTH_BACKENDS
@pytest.mark.timeout(300)
def test_a_merge_killed_after_moving_the_events_is_finished_by_the_runner(engine, data_dir, tmp_path, capsys):
    refusal, timeouts = _two_incidents(engine, tmp_path)
    before = pending(engine, refusal)
    _killed_midway(data_dir, "merge", timeouts, refusal)
    assert [a["action"] for a in engine.records.audit(timeouts)] == ["merge"]  # audited with the move
    code, _, err = cli(capsys, "reject", timeouts, "--reason", "not an outage", "--as", "bob")
    assert code == 3, err  # the reviewer's claim finds the dead merger: its merge is finished first
    run_pending(engine)
    assert engine.records.incident(timeouts)["status"] == "merged"
    row = engine.records.incident(refusal)
    assert row["status"] == "awaiting_approval" and row["pending_interrupt_id"] != before
    assert row["event_count"] == 7 and _services_analysed(engine, refusal) == {"orders-api", "gateway"}
    assert [a["action"] for a in engine.records.audit(refusal)] == ["merge"]


@BOTH_BACKENDS
@pytest.mark.timeout(300)
def test_a_split_killed_after_moving_the_events_is_finished_by_the_runner(engine, data_dir, tmp_path):
    refusal, timeouts = _two_incidents(engine, tmp_path)
    service = ReviewService(engine)
    service.merge(timeouts, into=refusal, reason="one outage", reviewer="ann")
    (extra,) = [p["pattern"] for p in service.patterns(refusal) if not p["opening"]]
    before = pending(engine, refusal)
    _killed_midway(data_dir, "split", refusal, extra)
    run_pending(engine)
    row = engine.records.incident(refusal)
    assert row["status"] == "awaiting_approval" and row["pending_interrupt_id"] != before
    assert row["event_count"] == 3 and _services_analysed(engine, refusal) == {"orders-api"}
    (split,) = [r for r in engine.records.incidents() if r["link_kind"] == "split"]
    assert split["status"] == "awaiting_approval" and _services_analysed(engine, split["incident_id"]) == {"gateway"}


@BOTH_BACKENDS
@pytest.mark.timeout(300)
def test_two_merges_of_one_pair_in_opposite_directions_have_one_winner(engine, tmp_path):
    refusal, timeouts = _two_incidents(engine, tmp_path)
    start, results = threading.Barrier(2), []

    def merge(away: str, into: str) -> None:
        start.wait()
        try:
            ReviewService(engine).merge(away, into=into, reason="one outage", reviewer=f"r-{away}")
            results.append(into)
        except Conflict as exc:
            results.append(type(exc).__name__)

    threads = [threading.Thread(target=merge, args=pair) for pair in ((refusal, timeouts), (timeouts, refusal))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    (kept,) = [r for r in results if r in (refusal, timeouts)]
    assert len(results) == 2, results
    statuses = {r["incident_id"]: r["status"] for r in engine.records.incidents()}
    assert statuses == {kept: "awaiting_approval", ({refusal, timeouts} - {kept}).pop(): "merged"}
