"""Recovery paths a review of the engine found broken: each is a scenario a user can hit."""
from __future__ import annotations

import json
import os
import socket

import pytest

from pipeline.store import owners
from pipeline.analyst.offline import OfflineAnalyst
from pipeline.errors import AnalystError
from pipeline.engine.graph import thread_config
from pipeline.clock import ManualClock
from pipeline.review.service import ReviewService
from pipeline.engine.runner import MAX_ATTEMPTS, advance_run, run_pending
from pipeline.unattended.file_ingest import ingest_path
from tests.support import BOTH_BACKENDS, by_category, cli, pending

# durability and concurrency hold on either store
pytestmark = BOTH_BACKENDS

HIKARI = {"service": "checkout-api", "host": "co-9", "level": "ERROR",
          "exception": "java.sql.SQLTransientConnectionException",
          "message": "HikariPool-1 - Connection is not available, request timed out after 30000ms."}


class FailingAnalyst(OfflineAnalyst):
    """The offline analyst whose recommendation fails while `failing` is set (a model endpoint down)."""

    failing = False

    def recommend(self, state, *, feedback=None):
        if self.failing:
            raise AnalystError("model endpoint answered HTTP 500 after 2 retries")
        return super().recommend(state, feedback=feedback)


@pytest.fixture
def analyst_for():
    # every engine of this module analyses with FailingAnalyst: the offline one until `failing` is set
    return lambda _settings, kb: FailingAnalyst(kb)


@pytest.fixture
def flaky(paused_engine):
    assert isinstance(paused_engine.analyst, FailingAnalyst)
    return paused_engine


def _write(path, *events):
    path.write_text("".join(json.dumps(e) + "\n" for e in events))


def test_a_reopened_incident_opening_at_the_same_instant_gets_its_own_id(engine, tmp_path):
    clock = engine.records.clock = ManualClock()
    first = tmp_path / "a.jsonl"
    _write(first, {**HIKARI, "_time": "2026-11-28T10:00:00Z"})
    ingest_path(engine, first)
    incident_id = engine.records.incidents()[0]["incident_id"]
    ReviewService(engine).reject(incident_id, reviewer="ann", reason="noise")
    # two hours on, past the reopen window, a backfilled host logs the same error at the same second
    clock.advance(hours=2)
    second = tmp_path / "b.jsonl"
    _write(second, {**HIKARI, "_time": "2026-11-28T10:00:00Z", "host": "co-10"})
    counts = ingest_path(engine, second).as_json()
    assert counts["incidents_new"] == 1
    ids = [r["incident_id"] for r in engine.records.incidents()]
    assert len(set(ids)) == 2 and all(i.startswith("INC-20261128-") for i in ids)


def test_a_log_file_rewritten_in_place_is_read_again_from_the_start(engine, tmp_path):
    log = tmp_path / "app.jsonl"
    _write(log, *({**HIKARI, "_time": f"2026-11-28T10:00:0{i}Z", "message": f"{HIKARI['message']} {i}"} for i in range(3)))
    ingest_path(engine, log)
    with log.open("w") as handle:  # `>` redirection: same inode, new content, now longer
        for i in range(6):
            handle.write(json.dumps({**HIKARI, "service": "inventory-service", "_time": f"2026-11-28T11:00:0{i}Z",
                                     "message": f"deadlock detected on batch {i}"}) + "\n")
    counts = ingest_path(engine, log).as_json()
    assert counts["events"] == 6 and counts["rejected"] == 0


def test_an_empty_folder_is_a_usage_error(tmp_path, capsys, data_dir, monkeypatch):
    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    (tmp_path / "notes.txt").write_text("not a log")
    code, _, err = cli(capsys, "ingest", str(tmp_path))
    assert code == 2 and "no log files" in err


def test_a_human_action_ends_an_earlier_run_of_failures(flaky):
    incident_id = by_category(flaky, "db_pool_exhausted")
    flaky.records.update_incident(incident_id, attempts=MAX_ATTEMPTS, last_error="AnalystError: earlier outage")
    ReviewService(flaky).revise(incident_id, reviewer="ann", feedback="smaller change", expect_interrupt=pending(flaky, incident_id))
    row = flaky.records.incident(incident_id)
    assert (row["status"], row["attempts"], row["last_error"]) == ("awaiting_approval", 0, None)
    assert advance_run(flaky, incident_id) != "gave_up"


def test_a_failed_evidence_merge_stops_offering_the_old_analysis(flaky, tmp_path):
    incident_id = by_category(flaky, "db_pool_exhausted")
    old = pending(flaky, incident_id)
    flaky.analyst.failing = True
    more = tmp_path / "more.jsonl"
    _write(more, {**HIKARI, "_time": "2026-11-28T10:07:00Z", "message": HIKARI["message"].replace("30000", "30111")})
    ingest_path(flaky, more)
    row = flaky.records.incident(incident_id)
    assert row["status"] == "failed" and row["pending_interrupt_id"] is None
    flaky.analyst.failing = False
    flaky.records.update_incident(incident_id, next_attempt_at=None)
    run_pending(flaky)
    row = flaky.records.incident(incident_id)
    assert row["status"] == "awaiting_approval" and row["pending_interrupt_id"] not in (None, old)


@pytest.mark.parametrize("action", ["edit", "replay", "fork"])
def test_a_change_whose_run_then_fails_is_still_audited(flaky, action):
    review = ReviewService(flaky)
    incident_id = by_category(flaky, "db_pool_exhausted")
    flaky.analyst.failing = True
    with pytest.raises(AnalystError):
        if action == "edit":
            review.edit(incident_id, reviewer="ann", edits={"rca.category": "db_deadlock"}, as_node="rca")
        elif action == "replay":
            before_recommend = next(h for h in review.history(incident_id, limit=50) if h["next"] == ["recommend"])
            review.replay(incident_id, checkpoint_id=before_recommend["checkpoint_id"], reviewer="ann")
        else:
            before_recommend = next(h for h in review.history(incident_id, limit=50) if h["next"] == ["recommend"])
            review.fork(incident_id, checkpoint_id=before_recommend["checkpoint_id"], reviewer="ann",
                        edits={"rca.confidence": 0.6})
    audit = flaky.records.audit(incident_id)
    assert [(a["action"], a["reviewer"]) for a in audit] == [(action, "ann")]
    assert "run failed" in audit[0]["note"]
    assert flaky.records.incident(incident_id)["status"] == "failed"


def test_forking_from_the_run_input_is_refused_cleanly(paused_engine, capsys, monkeypatch):
    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(paused_engine.settings.data_dir))
    incident_id = by_category(paused_engine, "db_pool_exhausted")
    first = list(paused_engine.graph.get_state_history(thread_config(incident_id)))[-1]
    code, out, err = cli(capsys, "fork", incident_id, "--checkpoint", first.config["configurable"]["checkpoint_id"],
                         "--reviewer", "ann", "--set", 'severity="high"')
    assert code == 2 and "no state yet" in err and "Traceback" not in err


def test_show_does_not_offer_another_branchs_fix_while_awaiting(paused_engine, capsys, monkeypatch):
    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(paused_engine.settings.data_dir))
    review = ReviewService(paused_engine)
    incident_id = by_category(paused_engine, "db_pool_exhausted")
    review.approve(incident_id, reviewer="ann", expect_interrupt=pending(paused_engine, incident_id))
    gate = next(h for h in review.history(incident_id) if h["next"] == ["approval"])["checkpoint_id"]
    review.replay(incident_id, checkpoint_id=gate, reviewer="ann")
    code, out, _ = cli(capsys, "show", incident_id, "--json")
    shown = json.loads(out)
    assert shown["status"] == "awaiting_approval" and shown["fix"] is None


def test_a_claim_left_by_a_dead_process_whose_pid_was_reused_is_taken_over(paused_engine):
    incident_id = by_category(paused_engine, "db_pool_exhausted")
    # our own pid stands in for a reused one: alive, but started at another time than the owner
    stale = f"{socket.gethostname()}:{os.getpid()}:1:0badc0de"
    assert not owners.owner_alive(stale)
    assert paused_engine.records.claim(incident_id, stale)  # what the dead process held
    ReviewService(paused_engine).approve(incident_id, reviewer="ann", expect_interrupt=pending(paused_engine, incident_id))
    assert paused_engine.records.incident(incident_id)["status"] == "fix_proposed"
    assert owners.owner_alive(owners.process_owner())
