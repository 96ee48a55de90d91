"""New evidence that repeats what a paused analysis holds is counted without re-running it: the
reviewer's pending interrupt and the approvals given on it stay valid. New templates, or a rise
past INCIDENTIQ_REANALYSE_GROWTH, re-run the analysis as before (issue 37.1)."""
from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest

from pipeline.engine import runner
from pipeline.errors import Conflict
from pipeline.review.service import ReviewService
from pipeline.sources.file import FileSource
from pipeline.unattended.poller import Poller
from tests.support import BOTH_BACKENDS, by_category, checkpoint_count, cli, paused_ids, pending, state_of

POOL = {"service": "checkout-api", "host": "co-1", "level": "ERROR",
        "exception": "java.sql.SQLTransientConnectionException",
        "message": "HikariPool-1 - Connection is not available, request timed out after {ms}ms."}


def _lines(log, *messages: str, minute: int = 8) -> None:
    """Append pool errors (each a message template filled with its number) to the live log."""
    with log.open("a") as out:
        for n, message in enumerate(messages):
            out.write(json.dumps({**POOL, "message": message.format(ms=30010 + n),
                                  "_time": f"2026-11-28T10:{minute:02d}:{n:02d}Z"}) + "\n")


def _poll(engine, log) -> None:
    poller = Poller(engine, FileSource(log, max_bytes=engine.settings.max_event_bytes), interval=0.05)
    try:
        poller.poll_once()
    finally:
        poller.close()


@pytest.fixture
def pool(paused_engine, tmp_path):
    """The paused pool-exhaustion incident (3 events analysed), merges at once with the product's
    policy for repeats (conftest.py makes every new event re-run it), and its live log."""
    from pipeline.config import Settings

    engine = paused_engine
    growth = Settings.model_fields["reanalyse_growth"].get_default(call_default_factory=True)
    engine.settings = engine.settings.model_copy(update={"merge_delay": 0.0, "reanalyse_growth": growth})
    return engine, by_category(engine, "db_pool_exhausted"), tmp_path / "live.jsonl"


@BOTH_BACKENDS
def test_repeats_are_counted_and_the_reviewer_still_approves_the_analysis_they_read(pool, capsys):
    engine, incident, log = pool
    seen, checkpoints = pending(engine, incident), checkpoint_count(engine, incident)
    _lines(log, POOL["message"], POOL["message"], POOL["message"])
    _poll(engine, log)
    row = engine.records.incident(incident)
    assert row["event_count"] == 6 and row["last_seen"].startswith("2026-11-28T10:08:02")
    # no re-run: the same interrupt, no checkpoint written, nothing left to merge
    assert row["status"] == "awaiting_approval" and row["pending_interrupt_id"] == seen
    assert checkpoint_count(engine, incident) == checkpoints
    assert not engine.records.has_unmerged(incident)
    assert ReviewService(engine).document(incident)["events_since_analysis"] == 3
    code, out, _ = cli(capsys, "show", incident)
    assert code == 0 and "3 events arrived since the analysis" in out
    ReviewService(engine).approve(incident, reviewer="ann", expect_interrupt=seen)
    assert engine.records.incident(incident)["status"] in ("fix_proposed", "approved")


def test_a_partial_approval_survives_repeats(pool):
    engine, incident, log = pool
    engine.settings = engine.settings.model_copy(update={"two_person": ("changes_files",)})
    review = ReviewService(engine)
    assert review.document(incident)["approvals_needed"] == 2
    seen = pending(engine, incident)
    review.approve(incident, reviewer="ann", expect_interrupt=seen)  # the first of two
    _lines(log, POOL["message"])
    _poll(engine, log)
    assert pending(engine, incident) == seen and [a["by"] for a in review.document(incident)["approvals"]] == ["ann"]
    review.approve(incident, reviewer="bob", expect_interrupt=seen)  # completes the count
    decision = engine.records.incident(incident)["summary"]["decision"]
    assert [a["by"] for a in decision["approvals"]] == ["ann", "bob"]


def test_a_new_template_re_runs_the_analysis_with_the_repeats_held_back(pool):
    engine, incident, log = pool
    seen = pending(engine, incident)
    _lines(log, POOL["message"], POOL["message"])
    _poll(engine, log)
    assert pending(engine, incident) == seen
    # the same miner template (one word differs), so it joins the incident; a shape the analysis lacks
    _lines(log, "HikariPool-1 - Connection is not available, request stalled out after {ms}ms.", minute=9)
    _poll(engine, log)
    row = engine.records.incident(incident)
    assert row["event_count"] == 6, "the variant opened an incident of its own: the test needs one that joins"
    assert row["status"] == "awaiting_approval" and row["pending_interrupt_id"] != seen
    assert {e.event_id for e in state_of(engine, incident).evidence} == {
        e.event_id for e in engine.records.events_of(incident)}  # the held-back repeats are in it now
    assert ReviewService(engine).document(incident)["events_since_analysis"] == 0


def test_a_rise_past_the_growth_threshold_re_runs_the_analysis(pool):
    engine, incident, log = pool
    engine.settings = engine.settings.model_copy(update={"reanalyse_growth": 2.0})
    seen = pending(engine, incident)
    _lines(log, POOL["message"], POOL["message"])  # 5 events < 2 x 3 analysed
    _poll(engine, log)
    assert pending(engine, incident) == seen
    _lines(log, POOL["message"], minute=9)  # 6 = 2 x 3
    _poll(engine, log)
    assert pending(engine, incident) != seen
    assert len(state_of(engine, incident).evidence) == 6
    assert engine.records.incident(incident)["analysed_events"] == 6


@pytest.mark.timeout(300)
def test_a_decision_racing_a_repeat_merge_has_one_winner_and_its_interrupt_stays_valid(pool):
    engine = pool[0]
    outcomes = []
    for incident in paused_ids(engine):
        seen = pending(engine, incident)
        # five more of its own first line, stored, not yet merged: the runner's merge and the
        # reviewer's approval then start together
        first = engine.records.events_of(incident)[0]
        engine.incidents.store_batch([first.model_copy(update={"event_id": f"{first.event_id}-again-{n}",
                                                               "time": first.time + timedelta(seconds=n + 1)})
                                      for n in range(5)], cursor=None)
        assert engine.records.has_unmerged(incident)
        start = threading.Barrier(2)
        outcome: dict[str, object] = {}

        def merge() -> None:
            start.wait()
            outcome["merge"] = runner.advance_run(engine, incident)

        def approve() -> None:
            start.wait()
            try:
                ReviewService(engine).approve(incident, reviewer="ann", expect_interrupt=seen)
                outcome["approve"] = "ok"
            except Conflict as exc:
                outcome["approve"] = type(exc).__name__

        threads = [threading.Thread(target=merge), threading.Thread(target=approve)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        outcomes.append(outcome)
        assert outcome["merge"] in ("counted", None), outcome  # None: the decision held the claim
        if outcome["approve"] != "ok":
            # the merge won the claim and only counted: the interrupt the reviewer saw is still the one
            assert pending(engine, incident) == seen
            ReviewService(engine).approve(incident, reviewer="ann", expect_interrupt=seen)
        assert engine.records.incident(incident)["status"] in ("fix_proposed", "approved")
        assert [a["action"] for a in engine.records.audit(incident)] == ["approve"]
    assert len(outcomes) >= 4


@BOTH_BACKENDS
@pytest.mark.parametrize("held_unmerged", [False, True], ids=["merged", "held-unmerged"])
def test_a_burst_merge_reads_only_the_ends_of_its_evidence_and_keeps_the_same_sample(pool, monkeypatch, held_unmerged):
    """A burst's incident holds hundreds of unmerged events when its growth re-runs the analysis: the
    re-run's evidence is the first and latest of them (merge_evidence), ties of one time kept in the
    order they were stored, and only those ends are built as events (not one per unmerged event).
    `held-unmerged`: the analysed events were never marked merged (a crash between the run and its
    record): they are read among the unmerged ones, and the sample is still the whole read's."""
    from pipeline.state import EVIDENCE_HEAD, EVIDENCE_TAIL, merge_evidence
    from pipeline.store import event_bodies

    engine, incident, log = pool
    seen, held = pending(engine, incident), state_of(engine, incident).evidence
    with log.open("a") as out:  # 240 repeats, three to a second: ties at every time
        for n in range(240):
            out.write(json.dumps({**POOL, "message": POOL["message"].format(ms=31000 + n),
                                  "_time": f"2026-11-28T11:{n // 180:02d}:{n // 3 % 60:02d}Z"}) + "\n")
    if held_unmerged:
        with engine.records.transaction() as conn:
            conn.executemany("UPDATE events SET merged = 0 WHERE event_id = $1", [(e.event_id,) for e in held])
    built: list[str] = []  # the events the merge built from its rows
    event_of, to_merge = event_bodies.event_of, engine.records.evidence_to_merge

    def counted(*args, **kwargs):
        monkeypatch.setattr(event_bodies, "event_of", lambda row: built.append(row["event_id"]) or event_of(row))
        try:
            return to_merge(*args, **kwargs)
        finally:
            monkeypatch.setattr(event_bodies, "event_of", event_of)

    monkeypatch.setattr(engine.records, "evidence_to_merge", counted)
    _poll(engine, log)
    assert pending(engine, incident) != seen, "240 repeats past 10 x 3 analysed re-run the analysis"
    # the sample's ends (10 + 40) and the 40 latest repeats held back, not the 240 events
    assert len(built) <= EVIDENCE_HEAD + 2 * EVIDENCE_TAIL + 2 * held_unmerged * len(held), f"{len(built)} built"
    # what the whole read gave: every unmerged event in stored order (PostgreSQL: in no set order, so
    # there the same times are the claim), sorted by time, sampled
    known = {e.event_id for e in held}
    stored = "event_id" if engine.records.postgres else "rowid"
    order = [r["event_id"] for r in engine.records.query(
        f"SELECT event_id FROM events WHERE incident_id = $1 ORDER BY {stored}", (incident,)) if r["event_id"] not in known]
    events = {e.event_id: e for e in engine.records.events_of(incident)}
    whole = sorted((events[i] for i in order), key=lambda e: e.time)
    expected = merge_evidence(list(held), merge_evidence([], whole))
    evidence = state_of(engine, incident).evidence
    assert [e.time for e in evidence] == [e.time for e in expected]
    if not engine.records.postgres:
        assert [e.event_id for e in evidence] == [e.event_id for e in expected]


def test_a_replay_with_current_evidence_leaves_nothing_arrived_since(pool, capsys):
    """Counted repeats are analysed by a replay on all the evidence: afterwards the record (the
    header, `show`) no longer says they "arrived since the analysis" (issue 38.1)."""
    engine, incident, log = pool
    _lines(log, POOL["message"], POOL["message"], POOL["message"])
    _poll(engine, log)
    review = ReviewService(engine)
    assert review.document(incident)["events_since_analysis"] == 3
    head = engine.records.incident(incident)["pending_checkpoint_id"]
    review.replay(incident, checkpoint_id=head, reviewer="ann", with_current_evidence=True)
    assert review.document(incident)["events_since_analysis"] == 0
    code, out, _ = cli(capsys, "show", incident)
    assert code == 0 and "arrived since" not in out
